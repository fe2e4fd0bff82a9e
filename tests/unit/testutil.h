/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Helpers the unit tests share: scratch directories and fresh images. */
#ifndef FAMFS_TESTUTIL_H
#define FAMFS_TESTUTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <glib.h>

/* A fresh directory under the test's temp dir; g_free() the result. */
char *test_scratch_dir(void);

/*
 * Formats a sparse image of @size bytes with a @log_len log, mastered by
 * @system_uuid (16 bytes); returns its path (g_free() it).
 */
char *test_make_image(const char *dir, const char *name, uint64_t size, uint64_t log_len,
		      const uint8_t *system_uuid);

/* Appends @first and the strings of @ap up to their NULL to @argv, then NULL. */
void test_argv_add_valist(GPtrArray *argv, const char *first, va_list ap);

/* Removes a scratch directory and what it holds. */
void test_remove_dir(const char *dir);

extern const uint8_t test_host_uuid[16];
extern const uint8_t test_other_uuid[16];

#endif
