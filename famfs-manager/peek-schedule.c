// SPDX-License-Identifier: LGPL-2.1-or-later
#include "peek-schedule.h"

void peek_schedule_init(struct peek_schedule *s, uint64_t fast_usec, uint64_t idle_usec, uint64_t now)
{
	s->fast_usec = fast_usec;
	s->idle_usec = idle_usec > fast_usec ? idle_usec : fast_usec;
	s->interval_usec = fast_usec;
	s->last_moved_usec = now;
}

uint64_t peek_schedule_next(struct peek_schedule *s, uint64_t now, bool moved)
{
	if (moved) {
		s->last_moved_usec = now;
		s->interval_usec = s->fast_usec;
	} else if (now - s->last_moved_usec >= PEEK_ACTIVE_USEC && s->interval_usec < s->idle_usec) {
		s->interval_usec = s->interval_usec * 2 < s->idle_usec ? s->interval_usec * 2 : s->idle_usec;
	}
	return s->interval_usec;
}
