// SPDX-License-Identifier: LGPL-2.1-or-later
/* famfs-manager/peek-schedule.c: when the follower peeks at the log headers next. */
#include <glib.h>

#include "peek-schedule.h"

#define MS 1000ULL

static void test_fast_while_active(void)
{
	struct peek_schedule s;
	uint64_t now = 5000 * MS;

	peek_schedule_init(&s, 2 * MS, 20 * MS, now);
	/* quiet peeks within the active window stay fast */
	while (now + 2 * MS < 5000 * MS + PEEK_ACTIVE_USEC) {
		now += 2 * MS;
		g_assert_cmpuint(peek_schedule_next(&s, now, false), ==, 2 * MS);
	}
}

static void test_backs_off_to_idle_then_snaps_back(void)
{
	struct peek_schedule s;
	uint64_t now = 0, wait = 0;
	int quiet_peeks = 0;

	peek_schedule_init(&s, 2 * MS, 20 * MS, now);
	now = PEEK_ACTIVE_USEC;
	/* doubling: 4, 8, 16, then capped at 20 */
	g_assert_cmpuint(peek_schedule_next(&s, now, false), ==, 4 * MS);
	g_assert_cmpuint(peek_schedule_next(&s, now += 4 * MS, false), ==, 8 * MS);
	g_assert_cmpuint(peek_schedule_next(&s, now += 8 * MS, false), ==, 16 * MS);
	g_assert_cmpuint(peek_schedule_next(&s, now += 16 * MS, false), ==, 20 * MS);
	for (; quiet_peeks < 1000; quiet_peeks++)
		g_assert_cmpuint(wait = peek_schedule_next(&s, now += wait, false), ==, 20 * MS);
	/* a move: fast at once, and for the whole window after it */
	g_assert_cmpuint(peek_schedule_next(&s, now, true), ==, 2 * MS);
	g_assert_cmpuint(peek_schedule_next(&s, now + PEEK_ACTIVE_USEC - 1, false), ==, 2 * MS);
	g_assert_cmpuint(peek_schedule_next(&s, now + PEEK_ACTIVE_USEC, false), ==, 4 * MS);
}

static void test_idle_not_below_fast(void)
{
	struct peek_schedule s;

	/* follow-idle-interval below follow-interval: the peeks never speed up when quiet */
	peek_schedule_init(&s, 10 * MS, 3 * MS, 0);
	g_assert_cmpuint(peek_schedule_next(&s, PEEK_ACTIVE_USEC * 2, false), ==, 10 * MS);
	g_assert_cmpuint(peek_schedule_next(&s, PEEK_ACTIVE_USEC * 3, true), ==, 10 * MS);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/peek-schedule/fast-while-active", test_fast_while_active);
	g_test_add_func("/peek-schedule/backs-off-then-snaps-back", test_backs_off_to_idle_then_snaps_back);
	g_test_add_func("/peek-schedule/idle-not-below-fast", test_idle_not_below_fast);
	return g_test_run();
}
