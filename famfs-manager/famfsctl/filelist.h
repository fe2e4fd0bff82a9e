/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The file list of create --from-list: one file a line,
 *
 *   PATH SIZE [MODE]
 *
 * separated by spaces or tabs.  PATH is absolute and in the escaped form
 * famfsctl takes on its command line (a space in a name is written \x20);
 * a PATH that is not UTF-8 is taken as raw bytes and escaped.  SIZE is a
 * byte count with an optional K, M, G or T suffix; MODE is octal
 * permission bits (default: the caller's, 0644 unless -m).  Blank lines
 * and lines whose first non-blank character is # are skipped.  Lines are
 * numbered from 1.  No I/O but reading the stream, and nothing printed:
 * a bad line is an error naming the list and the line.
 */
#ifndef FAMFSCTL_FILELIST_H
#define FAMFSCTL_FILELIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"

struct file_list_entry {
	char *path;                 /* escaped */
	uint64_t size;
	uint32_t mode;
	unsigned int line;
};

struct file_list {
	struct file_list_entry *v;
	size_t n;
};

void file_list_clear(struct file_list *l);

/*
 * Parses @f (named @name in messages).  At most FAMFS_BATCH_MAX files.
 * -EINVAL with "NAME:LINE: what is wrong" in @err for a bad line or too
 * many files, -EIO when the stream cannot be read, -ENOMEM.
 */
int file_list_parse(FILE *f, const char *name, uint32_t default_mode, struct file_list *ret,
		    struct famfs_err *err);

/* The line of the entry CreateFiles calls element @index; 0 when there is none. */
unsigned int file_list_line_of(const struct file_list *l, size_t index);

#endif
