// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfsctl's JSON, the one place json-c is used.  The field names are an
 * interface (famfsctl(8)): add fields, never rename them.
 */
#include <json-c/json.h>
#include <sys/stat.h>

#include "output.h"

static const char *nz(const char *s)
{
	return s ? s : "";
}

static void add_string(json_object *o, const char *key, const char *value)
{
	json_object_object_add(o, key, json_object_new_string(nz(value)));
}

static void add_u64(json_object *o, const char *key, uint64_t value)
{
	json_object_object_add(o, key, json_object_new_uint64(value));
}

void json_print(json_object *o)
{
	if (!o)
		return;
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

static json_object *fsinfo_json(const struct fsinfo *f)
{
	json_object *o = json_object_new_object(), *reasons = json_object_new_array();

	add_string(o, "object", f->object);
	add_string(o, "uuid", f->uuid);
	add_string(o, "device", f->device);
	add_string(o, "mountpoint", f->mountpoint);
	add_string(o, "role", f->role);
	add_string(o, "backend", f->backend);
	add_string(o, "health", f->health);
	for (char **p = f->reasons; p && *p; p++)
		json_object_array_add(reasons, json_object_new_string(*p));
	json_object_object_add(o, "health_reasons", reasons);
	add_u64(o, "log_used", f->log_used);
	add_u64(o, "log_total", f->log_total);
	add_u64(o, "capacity", f->capacity);
	add_u64(o, "allocated", f->allocated);
	add_u64(o, "free", f->free_bytes);
	add_u64(o, "files", f->files);
	add_u64(o, "directories", f->directories);
	add_u64(o, "entries_replayed", f->replayed);
	add_u64(o, "invalid_entries", f->invalid);
	add_u64(o, "torn_tail_retries", f->torn);
	add_u64(o, "last_replay_usec", f->last_replay);
	return o;
}

void json_print_status(const struct fsinfo_list *l)
{
	json_object *root = json_object_new_object(), *arr = json_object_new_array();

	for (size_t i = 0; i < l->n; i++)
		json_object_array_add(arr, fsinfo_json(&l->v[i]));
	json_object_object_add(root, "filesystems", arr);
	json_print(root);
}

void json_print_listing(const struct listing *l)
{
	json_object *arr = json_object_new_array();

	for (size_t i = 0; i < l->n; i++) {
		const struct dir_entry *d = &l->entries[i];
		json_object *o = json_object_new_object();

		add_string(o, "name", d->name);
		add_string(o, "type", S_ISDIR(d->mode) ? "directory" : "file");
		add_u64(o, "size", d->size);
		json_object_object_add(o, "mode", json_object_new_int(d->mode & 07777));
		json_object_object_add(o, "uid", json_object_new_int64(d->uid));
		json_object_object_add(o, "gid", json_object_new_int64(d->gid));
		json_object_array_add(arr, o);
	}
	json_print(arr);
}

void json_print_layout(const char *path, const struct file_layout *l)
{
	json_object *o = json_object_new_object(), *arr = json_object_new_array();

	add_string(o, "path", path);
	add_u64(o, "size", l->size);
	json_object_object_add(o, "mode", json_object_new_int(l->mode));
	json_object_object_add(o, "uid", json_object_new_int64(l->uid));
	json_object_object_add(o, "gid", json_object_new_int64(l->gid));
	add_string(o, "extent_type", l->type ? "interleaved" : "simple");
	if (l->type)
		add_u64(o, "chunk_size", l->chunk);
	for (size_t i = 0; i < l->n; i++) {
		json_object *x = json_object_new_object();

		add_u64(x, "devindex", l->ext[i].devindex);
		add_u64(x, "offset", l->ext[i].offset);
		add_u64(x, "length", l->ext[i].len);
		json_object_array_add(arr, x);
	}
	json_object_object_add(o, l->type ? "strips" : "extents", arr);
	json_print(o);
}

json_object *json_list_new(void)
{
	return json_object_new_array();
}

void json_verify_list_add(json_object *list, const char *path, uint64_t seed, const struct verify_result *v)
{
	json_object *o = json_object_new_object();

	add_string(o, "path", path);
	add_u64(o, "size", v->size);
	add_u64(o, "seed", seed);
	json_object_object_add(o, "ok", json_object_new_boolean(v->ok));
	if (!v->ok) {
		add_u64(o, "first_mismatch", v->bad_offset);
		json_object_object_add(o, "expected", json_object_new_int(v->expected));
		json_object_object_add(o, "found", json_object_new_int(v->found));
	}
	json_object_array_add(list, o);
}

void json_flush_list_add(json_object *list, const char *path, const struct flush_result *f)
{
	json_object *o = json_object_new_object();

	add_string(o, "path", path);
	add_u64(o, "size", f->size);
	add_string(o, "instruction", f->instruction);
	add_string(o, "fence", f->fence);
	json_object_object_add(o, "page_cache", json_object_new_boolean(f->page_cache));
	json_object_array_add(list, o);
}

json_object *json_check_list_new(void)
{
	return json_object_new_array();
}

void json_check_list_add_job(json_object *list, const char *mountpoint, const char *job)
{
	json_object *o = json_object_new_object();

	add_string(o, "mountpoint", mountpoint);
	add_string(o, "job", job);
	json_object_array_add(list, o);
}

void json_check_list_add(json_object *list, const char *mountpoint, const struct check_result *c)
{
	json_object *o = json_object_new_object(), *findings = json_object_new_array();

	add_string(o, "mountpoint", mountpoint);
	add_string(o, "verdict", c->verdict);
	add_u64(o, "errors", c->errors);
	add_u64(o, "warnings", c->warnings);
	for (size_t i = 0; i < c->n; i++) {
		const struct check_finding *f = &c->findings[i];
		json_object *x = json_object_new_object();

		add_string(x, "severity", f->severity);
		add_string(x, "code", f->code);
		json_object_object_add(x, "index", json_object_new_int64(f->index));
		add_string(x, "path", f->path);
		add_string(x, "message", f->message);
		json_object_array_add(findings, x);
	}
	json_object_object_add(o, "findings", findings);
	json_object_array_add(list, o);
}
