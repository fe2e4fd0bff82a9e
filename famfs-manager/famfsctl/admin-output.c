// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The output of famfsctl's administration verbs (admin.c): a job's end and
 * an attach, as text or JSON.  The JSON field names are an interface
 * (famfsctl(8)), as in json.c.
 */
#include <json-c/json.h>
#include <stdio.h>

#include "admin-output.h"

static void add_string(json_object *o, const char *key, const char *value)
{
	json_object_object_add(o, key, json_object_new_string(value ? value : ""));
}

static void print_json(json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
}

void admin_print_job(const char *job, const char *target, const struct job_state *s, bool json)
{
	json_object *o, *changes;

	if (!json) {
		if (s->success)
			printf("%s %s: %s\n", s->operation, target, s->message);
		for (char **c = s->changes; c && *c; c++)
			printf("  changed: %s\n", *c);
		return;
	}
	o = json_object_new_object();
	changes = json_object_new_array();
	add_string(o, "job", job);
	add_string(o, "operation", s->operation);
	add_string(o, "target", target);
	json_object_object_add(o, "running", json_object_new_boolean(s->running));
	json_object_object_add(o, "success", json_object_new_boolean(s->success));
	add_string(o, "error", s->error_name);
	add_string(o, "message", s->message);
	for (char **c = s->changes; c && *c; c++)
		json_object_array_add(changes, json_object_new_string(*c));
	json_object_object_add(o, "changes", changes);
	print_json(o);
}

void admin_print_started(const char *job, const char *operation, const char *target, bool json)
{
	json_object *o;

	if (!json) {
		printf("%s %s: started %s\n", operation, target, job);
		return;
	}
	o = json_object_new_object();
	add_string(o, "job", job);
	add_string(o, "operation", operation);
	add_string(o, "target", target);
	json_object_object_add(o, "running", json_object_new_boolean(1));
	print_json(o);
}

void admin_print_attached(const char *device, const struct fsinfo *f, bool json)
{
	json_object *o;

	if (!json) {
		printf("attached %s at %s (%s, %s backend, %s)\n", device, f->mountpoint[0] ? f->mountpoint : "(not mounted)",
		       f->role, f->backend, f->health);
		return;
	}
	o = json_object_new_object();
	add_string(o, "device", device);
	add_string(o, "object", f->object);
	add_string(o, "uuid", f->uuid);
	add_string(o, "mountpoint", f->mountpoint);
	add_string(o, "role", f->role);
	add_string(o, "backend", f->backend);
	add_string(o, "health", f->health);
	print_json(o);
}

void admin_print_detached(const char *target, const char *object, bool json)
{
	json_object *o;

	if (!json) {
		printf("detached %s\n", target);
		return;
	}
	o = json_object_new_object();
	add_string(o, "target", target);
	add_string(o, "object", object);
	json_object_object_add(o, "detached", json_object_new_boolean(1));
	print_json(o);
}
