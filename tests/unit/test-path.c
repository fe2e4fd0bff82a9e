// SPDX-License-Identifier: LGPL-2.1-or-later
/* The path rules and the namespace tree. */
#include <glib.h>
#include <string.h>

#include "escape.h"
#include "namespace.h"
#include "omf.h"
#include "path.h"

static void test_rules(void)
{
	static const struct { const char *path; enum famfs_finding_code code; } cases[] = {
		{ "a", FAMFS_OK },
		{ "a/b/c", FAMFS_OK },
		{ ".hidden", FAMFS_OK },
		{ "a/..b", FAMFS_OK },
		{ "", FAMFS_F_PATH_EMPTY },
		{ "/abs", FAMFS_F_PATH_ABSOLUTE },
		{ "a//b", FAMFS_F_PATH_EMPTY_COMPONENT },
		{ "a/", FAMFS_F_PATH_EMPTY_COMPONENT },
		{ ".", FAMFS_F_PATH_DOT_COMPONENT },
		{ "a/./b", FAMFS_F_PATH_DOT_COMPONENT },
		{ "..", FAMFS_F_PATH_DOT_COMPONENT },
		{ "a/../../etc/passwd", FAMFS_F_PATH_DOT_COMPONENT },
		{ "a/..", FAMFS_F_PATH_DOT_COMPONENT },
		{ ".meta", FAMFS_F_PATH_RESERVED },
		{ ".meta/.log", FAMFS_F_PATH_RESERVED },
		{ "a/.meta", FAMFS_OK },
		{ ".metadata", FAMFS_OK },
		{ ".met", FAMFS_OK },
		{ "caf\xe9/\x1b[31m\n", FAMFS_OK },   /* any byte but NUL and '/' */
	};

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		struct famfs_err err = { 0 };

		g_assert_cmpint(famfs_path_check(cases[i].path, &err), ==, cases[i].code);
		if (cases[i].code != FAMFS_OK)
			g_assert_cmpstr(err.msg, !=, "");
	}
}

static void test_length_limit(void)
{
	char p[FAMFS_MAX_PATHLEN + 1], field[FAMFS_MAX_PATHLEN];
	struct famfs_err err = { 0 };

	memset(p, 'x', 79);
	p[79] = '\0';
	g_assert_cmpint(famfs_path_check(p, NULL), ==, FAMFS_OK);
	p[79] = 'y';
	p[80] = '\0';
	g_assert_cmpint(famfs_path_check(p, &err), ==, FAMFS_F_PATH_UNTERMINATED);
	g_assert_cmpint(err.code, ==, -ENAMETOOLONG);
	memset(field, 'z', sizeof(field));
	g_assert_cmpint(famfs_path_check_field(field, NULL), ==, FAMFS_F_PATH_UNTERMINATED);
	field[79] = '\0';
	g_assert_cmpint(famfs_path_check_field(field, NULL), ==, FAMFS_OK);
}

static void test_relative(void)
{
	char rel[FAMFS_MAX_PATHLEN];
	struct famfs_err err = { 0 };
	char longp[200];

	g_assert_cmpint(famfs_path_relative("/run/famfs/x", "/run/famfs/x/a/b", rel, sizeof(rel), NULL), ==, 0);
	g_assert_cmpstr(rel, ==, "a/b");
	g_assert_cmpint(famfs_path_relative("/run/famfs/x/", "/run/famfs/x//a//b/", rel, sizeof(rel), NULL), ==, 0);
	g_assert_cmpstr(rel, ==, "a/b");
	g_assert_cmpint(famfs_path_relative("/run/famfs/x", "/run/famfs/xy/a", rel, sizeof(rel), &err), ==, -EINVAL);
	g_assert_nonnull(strstr(err.msg, "not under"));
	g_assert_cmpint(famfs_path_relative("/run/famfs/x", "/run/famfs/x", rel, sizeof(rel), &err), ==, -EINVAL);
	g_assert_cmpint(famfs_path_relative("/run/famfs/x", "/run/famfs/x/../y", rel, sizeof(rel), &err), ==, -EINVAL);
	g_assert_cmpint(famfs_path_relative("/run/famfs/x", "/run/famfs/x/./y", rel, sizeof(rel), NULL), ==, -EINVAL);
	g_assert_cmpint(famfs_path_relative("/run/famfs/x", "relative", rel, sizeof(rel), NULL), ==, -EINVAL);
	g_snprintf(longp, sizeof(longp), "/m/%0100d", 0);
	g_assert_cmpint(famfs_path_relative("/m", longp, rel, sizeof(rel), &err), ==, -ENAMETOOLONG);
	g_assert_cmpint(famfs_path_relative("/", "/top", rel, sizeof(rel), NULL), ==, 0);
	g_assert_cmpstr(rel, ==, "top");
}

static void test_namespace(void)
{
	struct famfs_ns *ns = NULL;
	const struct famfs_ns_node *n;
	uint32_t id, child;
	unsigned int count = 0;

	g_assert_cmpint(famfs_ns_new(&ns), ==, 0);
	g_assert_cmpint(famfs_ns_add(ns, "a", FAMFS_NS_DIR, 0755, 0, 0, 0, 0, &id), ==, 0);
	/* Room for fewer than are added: it grows past the reservation. */
	g_assert_cmpint(famfs_ns_reserve(ns, 3000), ==, 0);
	g_assert_cmpint(famfs_ns_add(ns, "a/f", FAMFS_NS_FILE, 0644, 1, 2, 100, 1, NULL), ==, 0);
	g_assert_cmpint(famfs_ns_add(ns, "a/f", FAMFS_NS_FILE, 0644, 1, 2, 100, 2, NULL), ==, -EEXIST);
	g_assert_cmpint(famfs_ns_add(ns, "b/f", FAMFS_NS_FILE, 0644, 1, 2, 100, 3, NULL), ==, -ENOENT);
	g_assert_cmpint(famfs_ns_add(ns, "a/f/g", FAMFS_NS_FILE, 0644, 1, 2, 100, 4, NULL), ==, -ENOTDIR);
	for (unsigned int i = 0; i < 5000; i++) {
		char p[32];

		g_snprintf(p, sizeof(p), "a/x%u", i);
		g_assert_cmpint(famfs_ns_add(ns, p, FAMFS_NS_FILE, 0644, 0, 0, i, 10 + i, NULL), ==, 0);
	}
	n = famfs_ns_node(ns, famfs_ns_lookup(ns, "a/x4321", 7));
	g_assert_nonnull(n);
	g_assert_cmpuint(n->size, ==, 4321);
	g_assert_cmpstr(n->path + n->name_off, ==, "x4321");
	g_assert_cmpuint(famfs_ns_lookup(ns, "a/x5000", 7), ==, FAMFS_NS_NONE);
	for (child = famfs_ns_node(ns, id)->first_child; child != FAMFS_NS_NONE;
	     child = famfs_ns_node(ns, child)->next_sibling)
		count++;
	g_assert_cmpuint(count, ==, 5001);
	g_assert_cmpuint(famfs_ns_count(ns, FAMFS_NS_FILE), ==, 5001);
	g_assert_cmpuint(famfs_ns_count(ns, FAMFS_NS_DIR), ==, 1);
	g_assert_cmpuint(famfs_ns_lookup(ns, "", 0), ==, FAMFS_NS_ROOT);
	famfs_ns_free(ns);
}

/* The add remembers the last parent: a different parent of the same length, or a longer one, is not it. */
static void test_namespace_parent_changes(void)
{
	struct famfs_ns *ns = NULL;
	uint32_t a, ab, f;

	g_assert_cmpint(famfs_ns_new(&ns), ==, 0);
	g_assert_cmpint(famfs_ns_add(ns, "a", FAMFS_NS_DIR, 0755, 0, 0, 0, 0, &a), ==, 0);
	g_assert_cmpint(famfs_ns_add(ns, "a/f", FAMFS_NS_FILE, 0644, 0, 0, 1, 1, NULL), ==, 0);
	g_assert_cmpint(famfs_ns_add(ns, "b/f", FAMFS_NS_FILE, 0644, 0, 0, 1, 2, NULL), ==, -ENOENT);
	g_assert_cmpint(famfs_ns_add(ns, "ab", FAMFS_NS_DIR, 0755, 0, 0, 0, 3, &ab), ==, 0);
	g_assert_cmpint(famfs_ns_add(ns, "a/g", FAMFS_NS_FILE, 0644, 0, 0, 1, 4, NULL), ==, 0);
	g_assert_cmpint(famfs_ns_add(ns, "ab/f", FAMFS_NS_FILE, 0644, 0, 0, 1, 5, &f), ==, 0);
	g_assert_cmpuint(famfs_ns_node(ns, f)->parent, ==, ab);
	g_assert_cmpint(famfs_ns_add(ns, "a/f/x", FAMFS_NS_FILE, 0644, 0, 0, 1, 6, NULL), ==, -ENOTDIR);
	g_assert_cmpint(famfs_ns_add(ns, "a/h", FAMFS_NS_FILE, 0644, 0, 0, 1, 7, &f), ==, 0);
	g_assert_cmpuint(famfs_ns_node(ns, f)->parent, ==, a);
	g_assert_cmpint(famfs_ns_add(ns, "top", FAMFS_NS_FILE, 0644, 0, 0, 1, 8, &f), ==, 0);
	g_assert_cmpuint(famfs_ns_node(ns, f)->parent, ==, FAMFS_NS_ROOT);
	famfs_ns_free(ns);
}

static char *escape_str(const char *s)
{
	char *out = famfs_escape_dup(s);

	g_assert_nonnull(out);
	return out;
}

static void test_escape(void)
{
	static const struct { const char *raw, *escaped; } cases[] = {
		{ "plain/name.txt", "plain/name.txt" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" },                   /* UTF-8 stays */
		{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80" },       /* 4-byte UTF-8 stays */
		{ "caf\xe9", "caf\\xe9" },                           /* Latin-1 */
		{ "a\nb", "a\\x0ab" },
		{ "\x1b[31m", "\\x1b[31m" },
		{ "del\x7f", "del\\x7f" },
		{ "back\\slash", "back\\x5cslash" },
		{ "c1\xc2\x9b", "c1\\xc2\\x9b" },                    /* U+009B CSI */
		{ "nbsp\xc2\xa0", "nbsp\xc2\xa0" },                  /* U+00A0 is printable */
		{ "\xef\xb7\x90", "\\xef\\xb7\\x90" },              /* U+FDD0 noncharacter */
		{ "\xef\xbf\xbe", "\\xef\\xbf\\xbe" },              /* U+FFFE */
		{ "\xed\xa0\x80", "\\xed\\xa0\\x80" },              /* a surrogate */
		{ "\xc0\xaf", "\\xc0\\xaf" },                        /* overlong '/' */
		{ "\xe2\x82", "\\xe2\\x82" },                        /* cut short */
		{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" },    /* above U+10FFFF */
	};
	char small[6];

	for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autofree char *e = escape_str(cases[i].raw);
		char back[256];

		g_assert_cmpstr(e, ==, cases[i].escaped);
		g_assert_true(g_utf8_validate(e, -1, NULL));
		g_assert_cmpint(famfs_needs_escape(cases[i].raw), ==, strcmp(cases[i].raw, e) != 0);
		g_assert_cmpint(famfs_unescape(e, back, sizeof(back), NULL), ==, 0);
		g_assert_cmpstr(back, ==, cases[i].raw);
	}
	g_assert_true(famfs_is_utf8("caf\xc3\xa9\n\\"));
	g_assert_false(famfs_is_utf8("caf\xe9"));
	g_assert_false(famfs_is_utf8("\xef\xbf\xbf"));
	/* A short buffer ends at a whole escape, terminated. */
	g_assert_cmpuint(famfs_escape("ab\n", 3, small, sizeof(small)), ==, 2);
	g_assert_cmpstr(small, ==, "ab");
}

/* unescape(escape(x)) == x and escape(x) is UTF-8 without controls, for random bytes. */
static void test_escape_random(void)
{
	GRand *rnd = g_rand_new_with_seed(11);

	for (int round = 0; round < 20000; round++) {
		char raw[FAMFS_MAX_PATHLEN], esc[FAMFS_ESCAPED_SIZE(FAMFS_MAX_PATHLEN)], back[FAMFS_MAX_PATHLEN];
		size_t len = g_rand_int_range(rnd, 1, FAMFS_MAX_PATHLEN);

		for (size_t k = 0; k < len; k++)
			raw[k] = (char)g_rand_int_range(rnd, 1, 256);
		raw[len] = '\0';
		famfs_escape(raw, len, esc, sizeof(esc));
		g_assert_true(g_utf8_validate(esc, -1, NULL));
		for (const char *p = esc; *p; p = g_utf8_next_char(p)) {
			gunichar c = g_utf8_get_char(p);

			g_assert_false(c < 0x20 || (c >= 0x7f && c < 0xa0));
		}
		g_assert_cmpint(famfs_unescape(esc, back, sizeof(back), NULL), ==, 0);
		g_assert_cmpmem(back, strlen(back), raw, len);
	}
	g_rand_free(rnd);
}

static void test_unescape_errors(void)
{
	struct famfs_err err = { 0 };
	char out[8];

	/* Other backslashes are kept; \x needs two hex digits. */
	g_assert_cmpint(famfs_unescape("a\\b\\x4", out, sizeof(out), NULL), ==, 0);
	g_assert_cmpstr(out, ==, "a\\b\\x4");
	g_assert_cmpint(famfs_unescape("\\X41\\x41", out, sizeof(out), NULL), ==, 0);
	g_assert_cmpstr(out, ==, "\\X41A");
	g_assert_cmpint(famfs_unescape("a\\x00b", out, sizeof(out), &err), ==, -EINVAL);
	g_assert_nonnull(strstr(err.msg, "NUL"));
	/* the size counts the unescaped bytes */
	g_assert_cmpint(famfs_unescape("\\x41\\x42\\x43\\x44\\x45\\x46\\x47", out, sizeof(out), NULL), ==, 0);
	g_assert_cmpstr(out, ==, "ABCDEFG");
	g_assert_cmpint(famfs_unescape("ABCDEFGH", out, sizeof(out), &err), ==, -ENAMETOOLONG);
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/path/rules", test_rules);
	g_test_add_func("/path/length-limit", test_length_limit);
	g_test_add_func("/path/relative", test_relative);
	g_test_add_func("/path/namespace", test_namespace);
	g_test_add_func("/path/namespace-parent-changes", test_namespace_parent_changes);
	g_test_add_func("/path/escape", test_escape);
	g_test_add_func("/path/escape-random", test_escape_random);
	g_test_add_func("/path/unescape-errors", test_unescape_errors);
	return g_test_run();
}
