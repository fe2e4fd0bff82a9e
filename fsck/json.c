// SPDX-License-Identifier: LGPL-2.1-or-later
/* The fsck.famfs --json report; its schema is documented in fsck.famfs(8). */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "escape.h"
#include "fsck.h"

/*
 * Every string from the medium or the command line goes out escaped
 * (escape.h): JSON must be UTF-8, and names on the medium need not be.
 */
static json_object *json_text(const char *s)
{
	size_t len = strlen(s);
	char *escaped = malloc(FAMFS_ESCAPED_SIZE(len));
	json_object *o;

	if (!escaped)
		return NULL;
	famfs_escape(s, len, escaped, FAMFS_ESCAPED_SIZE(len));
	o = json_object_new_string(escaped);
	free(escaped);
	return o;
}

static json_object *json_uuid(const uint8_t *u)
{
	char text[37];

	uuid_unparse(u, text);
	return json_object_new_string(text);
}

static json_object *finding_json(const struct famfs_finding *f)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "severity", json_object_new_string(famfs_severity_name(f->severity)));
	json_object_object_add(o, "code", json_object_new_string(famfs_finding_name(f->code)));
	json_object_object_add(o, "index", f->index >= 0 ? json_object_new_int64(f->index) : NULL);
	json_object_object_add(o, "path", f->path[0] ? json_text(f->path) : NULL);
	if (f->code == FAMFS_F_CROSSLINK) {
		json_object_object_add(o, "other_index", json_object_new_int64(f->other_index));
		json_object_object_add(o, "other_path", json_text(f->other_path));
		json_object_object_add(o, "offset", json_object_new_uint64(f->offset));
		json_object_object_add(o, "length", json_object_new_uint64(f->length));
	} else if (f->code == FAMFS_F_PATH_DUPLICATE) {
		json_object_object_add(o, "other_index", json_object_new_int64(f->other_index));
	}
	json_object_object_add(o, "message", json_text(f->message));
	return o;
}

int fsck_print_json(const struct fsck_options *o, const struct famfs_device *dev,
		    const struct famfs_check_report *r, const struct repair_result *rep,
		    int status)
{
	const struct famfs_check_summary *s = &r->summary;
	json_object *root = json_object_new_object();
	json_object *sb = json_object_new_object();
	json_object *log = json_object_new_object();
	json_object *sum = json_object_new_object();
	json_object *findings = json_object_new_array();
	json_object *repair = json_object_new_object();
	json_object *actions = json_object_new_array();
	const char *mode = o->mode == REPAIR_NO ? "no" : o->mode == REPAIR_YES ? "yes" : "preen";

	json_object_object_add(root, "device", json_text(o->device));
	json_object_object_add(root, "kind", json_object_new_string(famfs_device_kind_name(dev->kind)));
	json_object_object_add(root, "medium_size", json_object_new_uint64(dev->size));

	json_object_object_add(sb, "valid", json_object_new_boolean(s->superblock_valid));
	if (s->superblock_valid) {
		json_object_object_add(sb, "version", json_object_new_uint64(s->version));
		json_object_object_add(sb, "omf_major", json_object_new_int(s->omf_major));
		json_object_object_add(sb, "omf_minor", json_object_new_int(s->omf_minor));
		json_object_object_add(sb, "uuid", json_uuid(s->uuid));
		json_object_object_add(sb, "system_uuid", json_uuid(s->system_uuid));
		json_object_object_add(sb, "role", json_object_new_string(fsck_role(r, o->uuid_file)));
	}
	json_object_object_add(root, "superblock", sb);

	json_object_object_add(log, "valid", json_object_new_boolean(s->log_valid));
	json_object_object_add(log, "length", json_object_new_uint64(s->log_len));
	json_object_object_add(log, "entries_used", json_object_new_uint64(s->log_used));
	json_object_object_add(log, "entries_total", json_object_new_uint64(s->log_total));
	json_object_object_add(root, "log", log);

	json_object_object_add(sum, "capacity", json_object_new_uint64(s->capacity));
	json_object_object_add(sum, "allocated", json_object_new_uint64(s->allocated));
	json_object_object_add(sum, "free", json_object_new_uint64(s->free));
	json_object_object_add(sum, "file_bytes", json_object_new_uint64(s->file_bytes));
	json_object_object_add(sum, "files", json_object_new_uint64(s->files));
	json_object_object_add(sum, "directories", json_object_new_uint64(s->directories));
	json_object_object_add(sum, "bad_entries", json_object_new_uint64(s->bad_entries));
	json_object_object_add(sum, "rejected_entries", json_object_new_uint64(s->rejected_entries));
	json_object_object_add(sum, "crosslinked_units", json_object_new_uint64(s->crosslinked_units));
	json_object_object_add(root, "summary", sum);

	for (size_t k = 0; k < r->nfindings; k++)
		json_object_array_add(findings, finding_json(&r->findings[k]));
	json_object_object_add(root, "findings", findings);
	json_object_object_add(root, "suppressed_findings", json_object_new_uint64(r->suppressed));

	json_object_object_add(repair, "mode", json_object_new_string(mode));
	json_object_object_add(repair, "needed", json_object_new_boolean(r->repair.needed));
	if (r->repair.needed)
		json_object_object_add(repair, "new_next_index", json_object_new_uint64(r->repair.new_next_index));
	json_object_object_add(repair, "performed", json_object_new_boolean(rep->performed));
	for (int k = 0; k < rep->nactions; k++) {
		json_object *a = json_object_new_object();

		json_object_object_add(a, "field", json_object_new_string(rep->actions[k].field));
		json_object_object_add(a, "old", json_object_new_uint64(rep->actions[k].old_value));
		json_object_object_add(a, "new", json_object_new_uint64(rep->actions[k].new_value));
		json_object_array_add(actions, a);
	}
	json_object_object_add(repair, "actions", actions);
	if (rep->error.msg[0])
		json_object_object_add(repair, "error", json_text(rep->error.msg));
	json_object_object_add(root, "repair", repair);

	json_object_object_add(root, "errors", json_object_new_uint64(famfs_check_report_errors(r)));
	json_object_object_add(root, "warnings", json_object_new_uint64(r->by_severity[FAMFS_SEV_WARNING]));
	json_object_object_add(root, "exit_code", json_object_new_int(status));

	puts(json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	return 0;
}
