// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The Prometheus text format: famfs_ prefix, counters ending in _total,
 * base units, a uuid label per file system.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "message.h"
#include "output.h"

static const char *nz(const char *s)
{
	return s ? s : "";
}

static void prom_escape(FILE *o, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(o, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", o);
		else
			fputc(*s, o);
	}
}

static void prom_labels(FILE *o, const struct fsinfo *f)
{
	fputs("{uuid=\"", o);
	prom_escape(o, f->uuid);
	fputs("\"}", o);
}

void metrics_write(FILE *o, const struct fsinfo_list *l, const uint64_t faults[3])
{
	static const struct {
		const char *name, *type, *help;
		size_t off;
	} m[] = {
		{ "famfs_log_entries_used", "gauge", "Log entries written", offsetof(struct fsinfo, log_used) },
		{ "famfs_log_entries", "gauge", "Log entry slots in total", offsetof(struct fsinfo, log_total) },
		{ "famfs_capacity_bytes", "gauge", "Size of the file system", offsetof(struct fsinfo, capacity) },
		{ "famfs_allocated_bytes", "gauge", "Space in use, metadata included", offsetof(struct fsinfo, allocated) },
		{ "famfs_free_bytes", "gauge", "Space free for new files", offsetof(struct fsinfo, free_bytes) },
		{ "famfs_files", "gauge", "Files in the namespace", offsetof(struct fsinfo, files) },
		{ "famfs_directories", "gauge", "Directories in the namespace", offsetof(struct fsinfo, directories) },
		{ "famfs_log_replayed_entries_total", "counter", "Log entries applied to the namespace", offsetof(struct fsinfo, replayed) },
		{ "famfs_log_invalid_entries_total", "counter", "Invalid log entries seen", offsetof(struct fsinfo, invalid) },
		{ "famfs_log_torn_tail_retries_total", "counter", "Follower ticks spent waiting on an invalid tail", offsetof(struct fsinfo, torn) },
	};
	static const char *const healths[] = { "ok", "degraded", "failed" };
	static const char *const page_sizes[] = { "pte", "pmd", "pud" };
	const struct fsinfo *v = l->v;
	size_t n = l->n;

	fputs("# HELP famfs_filesystem_info Attached famfs file systems\n# TYPE famfs_filesystem_info gauge\n", o);
	for (size_t i = 0; i < n; i++) {
		fputs("famfs_filesystem_info{uuid=\"", o);
		prom_escape(o, v[i].uuid);
		fputs("\",device=\"", o);
		prom_escape(o, v[i].device);
		fputs("\",mountpoint=\"", o);
		prom_escape(o, v[i].mountpoint);
		fprintf(o, "\",role=\"%s\",backend=\"%s\"} 1\n", nz(v[i].role), nz(v[i].backend));
	}
	fputs("# HELP famfs_health File system health (1 for the current state)\n# TYPE famfs_health gauge\n", o);
	for (size_t i = 0; i < n; i++) {
		for (size_t h = 0; h < 3; h++) {
			fputs("famfs_health{uuid=\"", o);
			prom_escape(o, v[i].uuid);
			fprintf(o, "\",state=\"%s\"} %d\n", healths[h], v[i].health && !strcmp(v[i].health, healths[h]));
		}
	}
	for (size_t k = 0; k < sizeof(m) / sizeof(m[0]); k++) {
		fprintf(o, "# HELP %s %s\n# TYPE %s %s\n", m[k].name, m[k].help, m[k].name, m[k].type);
		for (size_t i = 0; i < n; i++) {
			fputs(m[k].name, o);
			prom_labels(o, &v[i]);
			fprintf(o, " %" PRIu64 "\n", *(const uint64_t *)((const char *)&v[i] + m[k].off));
		}
	}
	/* famfs.ko counts for the whole module: no uuid label. */
	fputs("# HELP famfs_faults_total Page faults famfs.ko served, all mounts, by page size\n"
	      "# TYPE famfs_faults_total counter\n", o);
	for (int s = 0; s < 3; s++)
		fprintf(o, "famfs_faults_total{size=\"%s\"} %" PRIu64 "\n", page_sizes[s], faults[s]);
	fputs("# HELP famfs_last_replay_timestamp_seconds When the last log entry was applied\n"
	      "# TYPE famfs_last_replay_timestamp_seconds gauge\n", o);
	for (size_t i = 0; i < n; i++) {
		fputs("famfs_last_replay_timestamp_seconds", o);
		prom_labels(o, &v[i]);
		fprintf(o, " %.6f\n", v[i].last_replay / 1e6);
	}
}

/* For node_exporter's textfile collector: a temporary file renamed into place. */
int metrics_write_textfile(const char *dir, const struct fsinfo_list *l, const uint64_t faults[3])
{
	char tmp[PATH_MAX], final[PATH_MAX];
	FILE *o;
	int fd, r = 0;

	snprintf(final, sizeof(final), "%s/famfs.prom", dir);
	snprintf(tmp, sizeof(tmp), "%s/.famfs.prom.XXXXXX", dir);
	fd = mkstemp(tmp);
	o = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!o) {
		r = tool_error_errno(-errno, "cannot create a file in %s: %m", dir);
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return r;
	}
	metrics_write(o, l, faults);
	if (fchmod(fd, 0644) < 0 || fflush(o) != 0 || fsync(fd) < 0 || ferror(o))
		r = tool_error_errno(errno > 0 ? -errno : -EIO, "cannot write %s: %m", tmp);
	fclose(o);
	if (r == 0 && rename(tmp, final) < 0)
		r = tool_error_errno(-errno, "cannot rename %s to %s: %m", tmp, final);
	if (r < 0)
		unlink(tmp);
	return r;
}
