// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The Check reply, for Manager1.Check and FileSystem1.Check: the checker's
 * verdict on the medium and, for a kernel mount, the mount compared with
 * the log file by file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-errors.h"
#include "bus-internal.h"
#include "check.h"
#include "cleanup.h"
#include "fsys.h"
#include "kernel.h"

#define MAX_FINDINGS_REPLY 1000

struct mount_problems {
	struct {
		char code[32];
		int64_t index;
		char path[FAMFS_MAX_PATHLEN + 256];
		char msg[FAMFS_ERR_MSG_MAX];
	} *items;
	size_t n, cap;
};

static void on_mount_problem(void *userdata, const char *code, int64_t index, const char *relpath,
			     const char *message)
{
	struct mount_problems *mp = userdata;

	if (mp->n == mp->cap) {
		size_t c = mp->cap ? mp->cap * 2 : 16;
		void *p = mp->cap < MAX_FINDINGS_REPLY ? realloc(mp->items, c * sizeof(*mp->items)) : NULL;

		if (!p) {
			mp->n++;    /* counted, not listed */
			return;
		}
		mp->items = p;
		mp->cap = c;
	}
	if (mp->n >= mp->cap) {
		mp->n++;
		return;
	}
	snprintf(mp->items[mp->n].code, sizeof(mp->items[0].code), "%s", code);
	mp->items[mp->n].index = index;
	snprintf(mp->items[mp->n].path, sizeof(mp->items[0].path), "%s", relpath);
	snprintf(mp->items[mp->n].msg, sizeof(mp->items[0].msg), "%s", message);
	mp->n++;
}

static int append_finding(sd_bus_message *reply, const char *severity, const char *code,
			  int64_t index, const char *path, const char *message)
{
	int r;

	r = sd_bus_message_open_container(reply, 'r', "ssxss");
	if (r >= 0)
		r = sd_bus_message_append(reply, "ssx", severity, code, index);
	if (r >= 0)
		r = bus_append_name(reply, path);
	if (r >= 0)
		r = bus_append_name(reply, message);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	return r;
}

int bus_reply_check(sd_bus_message *msg, struct bus_server *s, struct fsys *f, sd_bus_error *e)
{
	struct mount_problems mp = {0};
	struct famfs_check_report *rep = NULL;
	struct famfs_device *dev = NULL;
	struct famfs_err err = {0};
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	const char *verdict;
	size_t errors;
	int r;

	/* A mount disabled by a media failure cannot be read: the device still can. */
	if (f->bt.fs && !f->media_error[0]) {
		const uint8_t *base;
		uint64_t readable;

		fsys_medium(f, &base, &readable);
		r = famfs_check_view(base, readable, famfs_fs_device(f->bt.fs)->size, 0, &rep);
	} else {
		r = famfs_device_open(f->bt.device, 0, &dev, &err);
		if (r < 0)
			return bus_error_from_errno(e, -EIO, err.msg);
		r = famfs_check_medium(dev->base, dev->size, 0, &rep);
	}
	if (r < 0)
		goto out;
	errors = famfs_check_report_errors(rep);
	/* A kernel mount must also match the log, file by file. */
	if (f->bt.fs && f->bt.ops == &backend_kernel && !f->media_error[0]) {
		r = kernel_check_mount(&f->bt, on_mount_problem, &mp, &err);
		if (r < 0)
			on_mount_problem(&mp, "mount-unchecked", -1, "", err.msg);
	}
	if (f->media_error[0])
		on_mount_problem(&mp, "media-failure", -1, "", f->media_error);
	errors += mp.n;
	verdict = errors == 0 ? "clean" : (famfs_check_repair_fixes_all(rep) && mp.n == 0) ? "torn-tail" :
		  "damaged";
	r = sd_bus_message_new_method_return(msg, &reply);
	if (r >= 0)
		r = sd_bus_message_append(reply, "stt", verdict, (uint64_t)errors,
					  (uint64_t)rep->by_severity[FAMFS_SEV_WARNING]);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(ssxss)");
	for (size_t k = 0; r >= 0 && k < rep->nfindings && k < MAX_FINDINGS_REPLY; k++) {
		const struct famfs_finding *x = &rep->findings[k];

		r = append_finding(reply, famfs_severity_name(x->severity), famfs_finding_name(x->code),
				   x->index, x->path, x->message);
	}
	for (size_t k = 0; r >= 0 && k < mp.n && k < mp.cap && k < MAX_FINDINGS_REPLY; k++)
		r = append_finding(reply, "error", mp.items[k].code, mp.items[k].index, mp.items[k].path,
				   mp.items[k].msg);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
out:
	famfs_check_report_free(rep);
	famfs_device_close(dev);
	free(mp.items);
	return r;
}
