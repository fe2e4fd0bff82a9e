// SPDX-License-Identifier: LGPL-2.1-or-later
/* famfsctl's text output.  Names are printed as the daemon sends them: escaped. */
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>

#include "output.h"
#include "units.h"

static const char *nz(const char *s)
{
	return s ? s : "";
}

void text_status(const struct fsinfo_list *l)
{
	char b1[32], b2[32], b3[32];

	if (l->n == 0)
		printf("no famfs file systems attached\n");
	for (size_t i = 0; i < l->n; i++) {
		const struct fsinfo *f = &l->v[i];

		printf("%s%s\n", i ? "\n" : "", nz(f->mountpoint));
		printf("  uuid:        %s\n", f->uuid && f->uuid[0] ? f->uuid : "(unreadable)");
		printf("  device:      %s\n", nz(f->device));
		printf("  role:        %s (backend %s)\n", nz(f->role), nz(f->backend));
		printf("  health:      %s\n", nz(f->health));
		for (char **p = f->reasons; p && *p; p++)
			printf("               - %s\n", *p);
		printf("  log:         %" PRIu64 " of %" PRIu64 " entries used\n", f->log_used,
		       f->log_total);
		printf("  space:       %s allocated of %s, %s free\n",
		       famfs_format_size(f->allocated, b1, sizeof(b1)),
		       famfs_format_size(f->capacity, b2, sizeof(b2)),
		       famfs_format_size(f->free_bytes, b3, sizeof(b3)));
		printf("  contents:    %" PRIu64 " file%s, %" PRIu64 " director%s\n", f->files,
		       f->files == 1 ? "" : "s", f->directories, f->directories == 1 ? "y" : "ies");
		printf("  replayed:    %" PRIu64 " entries, %" PRIu64 " invalid seen\n", f->replayed,
		       f->invalid);
	}
}

static void mode_string(uint32_t mode, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";

	out[0] = S_ISDIR(mode) ? 'd' : '-';
	for (int i = 0; i < 9; i++)
		out[i + 1] = (mode & (0400 >> i)) ? rwx[i] : '-';
	out[10] = '\0';
}

void text_listing(const struct listing *l, bool long_format)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct dir_entry *d = &l->entries[i];
		const char *slash = S_ISDIR(d->mode) ? "/" : "";

		if (long_format) {
			char ms[11];

			mode_string(d->mode, ms);
			printf("%s %6u %6u %12" PRIu64 " %s%s\n", ms, d->uid, d->gid, d->size, d->name, slash);
		} else {
			printf("%s%s\n", d->name, slash);
		}
	}
}

void text_layout(const char *path, const struct file_layout *l)
{
	char b1[32];

	printf("%s: %" PRIu64 " bytes (%s), mode %04o, uid %u, gid %u\n", path, l->size,
	       famfs_format_size(l->size, b1, sizeof(b1)), l->mode, l->uid, l->gid);
	if (l->type)
		printf("interleaved: %zu strips, chunk %s\n", l->n, famfs_format_size(l->chunk, b1, sizeof(b1)));
	printf("%-8s %-18s %-18s %s\n", "devindex", "offset", "length", "");
	for (size_t i = 0; i < l->n; i++)
		printf("%-8" PRIu64 " 0x%016" PRIx64 " 0x%016" PRIx64 " %s\n", l->ext[i].devindex,
		       l->ext[i].offset, l->ext[i].len, famfs_format_size(l->ext[i].len, b1, sizeof(b1)));
}

void text_verify(const char *path, uint64_t seed, const struct verify_result *v)
{
	if (v->ok)
		printf("%s: ok (%" PRIu64 " bytes, seed %" PRIu64 ")\n", path, v->size, seed);
	else
		printf("%s: mismatch at offset %" PRIu64 " (0x%" PRIx64 "): expected 0x%02x, found 0x%02x (seed %" PRIu64 ")\n",
		       path, v->bad_offset, v->bad_offset, v->expected, v->found, seed);
}

void text_flush(const char *path, const struct flush_result *f)
{
	printf("%s: %" PRIu64 " bytes written back (%s, %s%s)\n", path, f->size, f->instruction, f->fence,
	       f->page_cache ? ", msync" : "");
}

void text_check(const char *mountpoint, const struct check_result *c)
{
	printf("%s: %s (%" PRIu64 " errors, %" PRIu64 " warnings)\n", mountpoint, c->verdict, c->errors,
	       c->warnings);
	for (size_t i = 0; i < c->n; i++)
		printf("  %s: %s: %s\n", c->findings[i].severity, c->findings[i].code, c->findings[i].message);
}
