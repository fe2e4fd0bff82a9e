// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The parts of famfsctl's verbs that need no daemon: the fill pattern of
 * create --fill / verify (famfsctl/pattern.c) and the list format of
 * create --from-list (famfsctl/filelist.c).
 */
#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "filelist.h"
#include "fs.h"
#include "pattern.h"

static void test_pattern_known_values(void)
{
	/* SplitMix64 seeded with 0 first yields 0xe220a8397b1dcdaf, then 0x6e789e6aa1b965f4 */
	g_assert_cmphex(pattern_word(0, 0), ==, UINT64_C(0xe220a8397b1dcdaf));
	g_assert_cmphex(pattern_word(0, 1), ==, UINT64_C(0x6e789e6aa1b965f4));
	/* least significant byte first */
	g_assert_cmphex(pattern_byte(0, 0), ==, 0xaf);
	g_assert_cmphex(pattern_byte(0, 7), ==, 0xe2);
	g_assert_cmphex(pattern_byte(0, 8), ==, 0xf4);
	/* the seed changes every word */
	for (uint64_t k = 0; k < 1000; k++)
		g_assert_cmphex(pattern_word(1, k), !=, pattern_word(2, k));
}

static void test_pattern_fill_any_offset(void)
{
	uint8_t buf[200];

	for (uint64_t off = 0; off < 24; off++) {
		for (size_t len = 0; len < 40; len++) {
			memset(buf, 0x5a, sizeof(buf));
			pattern_fill(42, off, buf, len);
			for (size_t i = 0; i < len; i++)
				g_assert_cmphex(buf[i], ==, pattern_byte(42, off + i));
			g_assert_cmphex(buf[len], ==, 0x5a);    /* nothing past the end */
		}
	}
	/* a large offset near the end of the 64-bit range */
	pattern_fill(7, UINT64_MAX - 100, buf, 100);
	for (size_t i = 0; i < 100; i++)
		g_assert_cmphex(buf[i], ==, pattern_byte(7, UINT64_MAX - 100 + i));
}

static void test_pattern_check_names_first_byte(void)
{
	uint8_t buf[4096];
	uint64_t bad = 0;

	pattern_fill(99, 13, buf, sizeof(buf));
	g_assert_true(pattern_check(99, 13, buf, sizeof(buf), &bad));
	g_assert_false(pattern_check(98, 13, buf, sizeof(buf), &bad));
	g_assert_cmpuint(bad, ==, 13);
	/* wrong offset: the same bytes one place later do not match */
	g_assert_false(pattern_check(99, 14, buf, sizeof(buf), &bad));
	for (size_t at = 0; at < sizeof(buf); at += 37) {
		pattern_fill(99, 13, buf, sizeof(buf));
		buf[at] ^= 0x01;
		if (at + 5 < sizeof(buf))
			buf[at + 5] ^= 0x80;    /* a later difference must not win */
		g_assert_false(pattern_check(99, 13, buf, sizeof(buf), &bad));
		g_assert_cmpuint(bad, ==, 13 + at);
	}
	g_assert_true(pattern_check(99, 13, buf, 0, &bad));
}

static void test_seed_parse(void)
{
	static const char *const bad[] = { "", "-1", "+1", " 1", "1 ", "1x", "abc", "0x", "0xg",
					   "18446744073709551616x" };
	uint64_t v = 1;

	g_assert_cmpint(pattern_parse_seed("0", &v), ==, 0);
	g_assert_cmpuint(v, ==, 0);
	g_assert_cmpint(pattern_parse_seed("18446744073709551615", &v), ==, 0);
	g_assert_cmpuint(v, ==, UINT64_MAX);
	g_assert_cmpint(pattern_parse_seed("0xdeadbeef", &v), ==, 0);
	g_assert_cmpuint(v, ==, 0xdeadbeef);
	g_assert_cmpint(pattern_parse_seed("18446744073709551616", &v), ==, -ERANGE);
	g_assert_cmpint(pattern_parse_seed("0x10000000000000000", &v), ==, -ERANGE);
	for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
		v = 5;
		g_assert_cmpint(pattern_parse_seed(bad[i], &v), ==, -EINVAL);
		g_assert_cmpuint(v, ==, 5);
	}
	g_assert_cmpint(pattern_parse_seed(NULL, &v), ==, -EINVAL);
}

static int parse_text(const char *text, size_t len, struct file_list *l, struct famfs_err *err)
{
	FILE *f = fmemopen((void *)text, len, "r");
	int r;

	g_assert_nonnull(f);
	r = file_list_parse(f, "list", 0640, l, err);
	fclose(f);
	return r;
}

static void test_list_good(void)
{
	static const char text[] = "# a comment\n"
				   "\n"
				   "/run/famfs/a/one 4096\n"
				   "   \t# indented comment\n"
				   "\t/run/famfs/a/two\t2M   0600\r\n"
				   "/run/famfs/a/sp\\x20ace 1 0\n"
				   "/run/famfs/a/\xff\xfe 0x1000";     /* no newline at the end */
	struct file_list l = { 0 };
	struct famfs_err err = { 0 };

	g_assert_cmpint(parse_text(text, strlen(text), &l, &err), ==, 0);
	g_assert_cmpuint(l.n, ==, 4);
	g_assert_cmpstr(l.v[0].path, ==, "/run/famfs/a/one");
	g_assert_cmpuint(l.v[0].size, ==, 4096);
	g_assert_cmpuint(l.v[0].mode, ==, 0640);     /* the default given */
	g_assert_cmpuint(l.v[0].line, ==, 3);
	g_assert_cmpstr(l.v[1].path, ==, "/run/famfs/a/two");
	g_assert_cmpuint(l.v[1].size, ==, 2 << 20);
	g_assert_cmpuint(l.v[1].mode, ==, 0600);
	g_assert_cmpuint(l.v[1].line, ==, 5);
	g_assert_cmpstr(l.v[2].path, ==, "/run/famfs/a/sp\\x20ace");   /* left escaped for the daemon */
	g_assert_cmpuint(l.v[2].mode, ==, 0);
	g_assert_cmpstr(l.v[3].path, ==, "/run/famfs/a/\\xff\\xfe");   /* raw bytes escaped */
	g_assert_cmpuint(l.v[3].size, ==, 4096);
	g_assert_cmpuint(l.v[3].line, ==, 7);
	g_assert_cmpuint(file_list_line_of(&l, 1), ==, 5);
	g_assert_cmpuint(file_list_line_of(&l, 4), ==, 0);
	file_list_clear(&l);
	g_assert_cmpuint(l.n, ==, 0);

	/* an empty list is no error here: create refuses it */
	g_assert_cmpint(parse_text("# only\n\n", 8, &l, &err), ==, 0);
	g_assert_cmpuint(l.n, ==, 0);
	file_list_clear(&l);
}

struct bad_line {
	const char *text;
	const char *message;        /* the start of the message */
};

static void test_list_bad_lines(void)
{
	static const struct bad_line cases[] = {
		{ "/a 1\n/b\n", "list:2: expected PATH SIZE [MODE], found 1 field" },
		{ "/a 1 0644 extra\n", "list:1: expected PATH SIZE [MODE], found more than 3 fields" },
		{ "# c\nrelative/x 1\n", "list:2: path \"relative/x\" is not absolute" },
		{ "../x 1\n", "list:1: path \"../x\" is not absolute" },
		{ "/a 0\n", "list:1: size 0: famfs files are preallocated" },
		{ "/a -1\n", "list:1: invalid size \"-1\"" },
		{ "/a 12Q\n", "list:1: invalid size \"12Q\"" },
		{ "/a 99999999999999999999\n", "list:1: size \"99999999999999999999\" does not fit in 64 bits" },
		{ "/a 16777216T\n", "list:1: size \"16777216T\" does not fit in 64 bits" },
		{ "/a 1 0999\n", "list:1: invalid mode \"0999\"" },
		{ "/a 1 17777\n", "list:1: invalid mode \"17777\"" },
		{ "/a 1 rw\n", "list:1: invalid mode \"rw\"" },
	};
	struct famfs_err err = { 0 };
	struct file_list l = { 0 };

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		memset(&err, 0, sizeof(err));
		g_assert_cmpint(parse_text(cases[i].text, strlen(cases[i].text), &l, &err), ==, -EINVAL);
		if (!g_str_has_prefix(err.msg, cases[i].message))
			g_printerr("case %zu: got \"%s\"\n", i, err.msg);
		g_assert_true(g_str_has_prefix(err.msg, cases[i].message));
		g_assert_cmpuint(l.n, ==, 0);
		g_assert_null(l.v);
	}
	/* a NUL byte inside a line */
	g_assert_cmpint(parse_text("/a 1\n/b\0c 1\n", 12, &l, &err), ==, -EINVAL);
	g_assert_cmpstr(err.msg, ==, "list:2: holds a NUL byte");
}

static void test_list_too_many(void)
{
	GString *s = g_string_new(NULL);
	struct famfs_err err = { 0 };
	struct file_list l = { 0 };

	for (int i = 0; i < FAMFS_BATCH_MAX; i++)
		g_string_append_printf(s, "/run/famfs/a/f%d 1\n", i);
	g_assert_cmpint(parse_text(s->str, s->len, &l, &err), ==, 0);
	g_assert_cmpuint(l.n, ==, FAMFS_BATCH_MAX);
	file_list_clear(&l);
	g_string_append(s, "# comments do not count\n/run/famfs/a/last 1\n");
	g_assert_cmpint(parse_text(s->str, s->len, &l, &err), ==, -EINVAL);
	g_assert_true(g_str_has_prefix(err.msg, "list:65538: more than 65536 files"));
	g_string_free(s, TRUE);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/famfsctl/pattern/known-values", test_pattern_known_values);
	g_test_add_func("/famfsctl/pattern/fill-any-offset", test_pattern_fill_any_offset);
	g_test_add_func("/famfsctl/pattern/check-names-first-byte", test_pattern_check_names_first_byte);
	g_test_add_func("/famfsctl/pattern/seed-parse", test_seed_parse);
	g_test_add_func("/famfsctl/list/good", test_list_good);
	g_test_add_func("/famfsctl/list/bad-lines", test_list_bad_lines);
	g_test_add_func("/famfsctl/list/too-many", test_list_too_many);
	return g_test_run();
}
