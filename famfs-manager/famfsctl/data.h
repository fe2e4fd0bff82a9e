/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * famfsctl's data path: file bytes never go over the bus.  Reads map the
 * descriptor OpenFile hands over at the extents that come with it; root
 * writes the same way, other callers hand the daemon a sealed memfd.
 * Each function reports its own failures and returns a negative errno.
 */
#ifndef FAMFSCTL_DATA_H
#define FAMFSCTL_DATA_H

#include <stdint.h>

/* Writes each file's bytes to stdout; goes on with the next file after a failure. */
int data_cat(char **paths, int n);

/* Copies @size bytes of the open local file @src_fd (named @src) into the famfs file @dst. */
int data_copy_in(int src_fd, const char *src, const char *dst, uint64_t size);

#endif
