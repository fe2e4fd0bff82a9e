// SPDX-License-Identifier: LGPL-2.1-or-later
/* The human-readable fsck.famfs report. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <uuid/uuid.h>

#include "escape.h"
#include "fsck.h"
#include "units.h"

static void print_finding(const struct famfs_finding *f)
{
	const char *sev = f->severity == FAMFS_SEV_FATAL ? "FATAL" :
			  f->severity == FAMFS_SEV_ERROR ? "ERROR" :
			  f->severity == FAMFS_SEV_WARNING ? "WARNING" : "NOTE";
	char message[FAMFS_ESCAPED_SIZE(sizeof(f->message))];

	/* Messages quote names from the medium: a newline or ESC in one must not forge a line. */
	famfs_escape(f->message, strlen(f->message), message, sizeof(message));
	printf("%s [%s] %s\n", sev, famfs_finding_name(f->code), message);
}

static void print_summary(const struct famfs_check_report *r, const char *role)
{
	const struct famfs_check_summary *s = &r->summary;
	char a[32], b[32], c[32], d[32];
	char uuid[37], sys[37];

	uuid_unparse(s->uuid, uuid);
	uuid_unparse(s->system_uuid, sys);
	printf("Superblock: version %" PRIu64 ", OMF %u.%u\n", s->version, s->omf_major, s->omf_minor);
	printf("  uuid:   %s\n", uuid);
	printf("  master: %s (this host is %s)\n", sys, role);
	if (!s->log_valid)
		return;
	printf("Log: %" PRIu64 " of %" PRIu64 " entries used (%s)\n", s->log_used, s->log_total,
	       famfs_format_size(s->log_len, a, sizeof(a)));
	printf("Space: capacity %s, allocated %s, free %s, file data %s\n",
	       famfs_format_size(s->capacity, a, sizeof(a)),
	       famfs_format_size(s->allocated, b, sizeof(b)),
	       famfs_format_size(s->free, c, sizeof(c)),
	       famfs_format_size(s->file_bytes, d, sizeof(d)));
	printf("Namespace: %" PRIu64 " files, %" PRIu64 " directories\n", s->files, s->directories);
	if (s->bad_entries || s->rejected_entries || s->crosslinked_units)
		printf("Damage: %" PRIu64 " entries failing integrity, %" PRIu64
		       " entries breaking a rule, %" PRIu64 " allocation units cross-linked\n",
		       s->bad_entries, s->rejected_entries, s->crosslinked_units);
}

void fsck_print_text(const struct fsck_options *o, const struct famfs_device *dev,
		     const struct famfs_check_report *r, const struct repair_result *rep,
		     int status)
{
	size_t errors = famfs_check_report_errors(r);
	size_t warnings = r->by_severity[FAMFS_SEV_WARNING];
	char size[32];
	char device[FAMFS_ESCAPED_SIZE(PATH_MAX)];

	famfs_escape(o->device, strlen(o->device), device, sizeof(device));
	printf("fsck.famfs: checking %s (%s, %s)\n", device, famfs_device_kind_name(dev->kind),
	       famfs_format_size(dev->size, size, sizeof(size)));
	for (size_t k = 0; k < r->nfindings; k++) {
		const struct famfs_finding *f = &r->findings[k];

		if (f->severity >= FAMFS_SEV_WARNING || o->verbose)
			print_finding(f);
	}
	if (r->suppressed)
		printf("... and %zu more findings not shown\n", r->suppressed);
	if (r->summary.superblock_valid)
		print_summary(r, fsck_role(r, o->uuid_file));

	if (r->repair.needed && !rep->attempted)
		printf("Repair possible: set the log's next index to %" PRIu64
		       " (run with -y); no intact entry would be removed\n", r->repair.new_next_index);
	for (int k = 0; k < rep->nactions; k++)
		printf("REPAIRED: log header %s %" PRIu64 " -> %" PRIu64 "\n",
		       rep->actions[k].field, rep->actions[k].old_value, rep->actions[k].new_value);

	if (status == 0)
		printf("%s: clean\n", device);
	else if (status & 8)
		printf("%s: %zu errors, repair failed\n", device, errors);
	else if (status & 4)
		printf("%s: %zu errors, %zu warnings: file system has errors%s\n", device, errors,
		       warnings, rep->performed ? " (some corrected)" : "");
	else
		printf("%s: %zu errors corrected\n", device, errors);
}
