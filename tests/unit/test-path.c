// SPDX-License-Identifier: LGPL-2.1-or-later
/* The path rules and the namespace tree. */
#include <glib.h>
#include <string.h>

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

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/path/rules", test_rules);
	g_test_add_func("/path/length-limit", test_length_limit);
	g_test_add_func("/path/relative", test_relative);
	g_test_add_func("/path/namespace", test_namespace);
	return g_test_run();
}
