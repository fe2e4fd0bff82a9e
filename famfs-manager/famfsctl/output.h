/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * famfsctl's output, from the client's structs: text for people (text.c),
 * JSON through json-c (json.c, the only user of json-c; the field names are
 * documented in famfsctl(8) and stay stable), and the Prometheus text
 * format (metrics.c).
 */
#ifndef FAMFSCTL_OUTPUT_H
#define FAMFSCTL_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "client.h"
#include "fill.h"

struct json_object;

/* What flush wrote back, and how (cache.h). */
struct flush_result {
	uint64_t size;
	const char *instruction, *fence;
	bool page_cache;            /* msync wrote the page cache out too */
};

void text_status(const struct fsinfo_list *l);
void text_listing(const struct listing *l, bool long_format);
void text_layout(const char *path, const struct file_layout *l);
void text_verify(const char *path, uint64_t seed, const struct verify_result *v);
void text_flush(const char *path, const struct flush_result *f);
void text_check(const char *mountpoint, const struct check_result *c);

void json_print_status(const struct fsinfo_list *l);
void json_print_listing(const struct listing *l);
void json_print_layout(const char *path, const struct file_layout *l);
/* verify and flush print one array, an object per file. */
struct json_object *json_list_new(void);
void json_verify_list_add(struct json_object *list, const char *path, uint64_t seed, const struct verify_result *v);
void json_flush_list_add(struct json_object *list, const char *path, const struct flush_result *f);
/* check prints one array, filled as the file systems are checked. */
struct json_object *json_check_list_new(void);
void json_check_list_add(struct json_object *list, const char *mountpoint, const struct check_result *c);
/* check --no-wait: the job started on @mountpoint. */
void json_check_list_add_job(struct json_object *list, const char *mountpoint, const char *job);
/* Prints and frees @o; accepts NULL. */
void json_print(struct json_object *o);

/* The metrics to @o; with a textfile, DIR/famfs.prom replaced atomically (reports failures). */
void metrics_write(FILE *o, const struct fsinfo_list *l, const uint64_t faults[3]);
int metrics_write_textfile(const char *dir, const struct fsinfo_list *l, const uint64_t faults[3]);

#endif
