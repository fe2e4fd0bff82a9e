// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Who sent a call, and what it may do.  The uid comes from sd-bus, the
 * groups from dbus-daemon (recorded when the caller connected), and file
 * permissions are decided as the kernel decides them.  For polkit actions,
 * root (effective uid 0 of the sending connection) is allowed; anyone else
 * is asked of polkit with CheckAuthorization, sent asynchronously so the
 * daemon keeps serving while polkit thinks.  When polkit is disabled or
 * not on the bus, the call is denied.  Each denial is logged with the
 * action, the caller (uid and unique bus name) and the method: at notice
 * when polkit (or the configuration) said no, at warning when polkit
 * could not be asked or gave no usable answer.
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth.h"
#include "bus.h"
#include "cleanup.h"
#include "famfs/bus-api.h"
#include "logging.h"
#include "manager.h"

#define POLKIT_TIMEOUT_USEC (25ULL * 1000000)

struct auth_pending {
	struct bus_server *s;
	sd_bus_message *msg;
	auth_continue_fn cont;
	char action[96];
	uid_t uid;
};

/*
 * The groups dbus-daemon recorded for @sender when it connected (primary
 * and supplementary: UnixGroupIDs of GetConnectionCredentials); -ENODATA
 * when the bus does not tell, -E2BIG past @max.
 */
static int bus_group_ids(struct bus_server *s, const char *sender, gid_t *ret, size_t max)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	const char *key;
	int n = -ENODATA, r;

	r = sd_bus_call_method(s->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
			       "GetConnectionCredentials", NULL, &reply, "s", sender);
	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		r = sd_bus_message_read(reply, "s", &key);
		if (r >= 0 && !strcmp(key, "UnixGroupIDs")) {
			uint32_t g;

			n = 0;
			r = sd_bus_message_enter_container(reply, 'v', "au");
			if (r >= 0)
				r = sd_bus_message_enter_container(reply, 'a', "u");
			while (r >= 0 && (r = sd_bus_message_read(reply, "u", &g)) > 0) {
				if ((size_t)n == max) {
					r = -E2BIG;
					break;
				}
				ret[n++] = g;
			}
			if (r >= 0)
				r = sd_bus_message_exit_container(reply);
			if (r >= 0)
				r = sd_bus_message_exit_container(reply);
		} else if (r >= 0)
			r = sd_bus_message_skip(reply, "v");
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
	}
	return r < 0 ? r : n;
}

/* What the bus says about the sender, cached per unique name. */
static int sender_entry(struct bus_server *s, sd_bus_message *msg, const struct sender_cache_entry **ret)
{
	const char *sender = sd_bus_message_get_sender(msg);
	struct sender_cache_entry *e;
	const gid_t *groups = NULL;
	_cleanup_(sd_bus_creds_unrefp) sd_bus_creds *c = NULL;
	gid_t bus_groups[SENDER_MAX_GROUPS];
	uid_t uid;
	gid_t gid = (gid_t)-1;
	int ngroups = -1;
	int r;

	/* Unique names are never reused on a bus, so what they map to cannot change. */
	if (sender && strlen(sender) < sizeof(s->senders[0].name)) {
		for (size_t i = 0; i < sizeof(s->senders) / sizeof(s->senders[0]); i++) {
			if (strcmp(s->senders[i].name, sender) == 0) {
				*ret = &s->senders[i];
				return 0;
			}
		}
	}
	r = sd_bus_query_sender_creds(msg, SD_BUS_CREDS_EUID | SD_BUS_CREDS_UID | SD_BUS_CREDS_EGID |
				      SD_BUS_CREDS_GID | SD_BUS_CREDS_SUPPLEMENTARY_GIDS, &c);
	if (r < 0)
		return r;
	r = sd_bus_creds_get_euid(c, &uid);
	if (r < 0)
		r = sd_bus_creds_get_uid(c, &uid);
	if (r >= 0 && sd_bus_creds_get_egid(c, &gid) < 0)
		(void)sd_bus_creds_get_gid(c, &gid);
	if (r >= 0)
		ngroups = sd_bus_creds_get_supplementary_gids(c, &groups);
	if (r < 0)
		return r;
	if (ngroups < 0 && sender) {
		/* sd-bus does not ask dbus-daemon for them: its GetConnectionCredentials tells */
		ngroups = bus_group_ids(s, sender, bus_groups, SENDER_MAX_GROUPS);
		if (ngroups == -E2BIG)
			return ngroups;
		groups = bus_groups;
	}
	if (gid == (gid_t)-1) {
		/* dbus-daemon tells only the uid: take the user's primary group */
		struct passwd pw, *res = NULL;
		char buf[2048];

		if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res)
			gid = pw.pw_gid;
		else
			gid = uid == 0 ? 0 : (gid_t)-1;
	}
	e = &s->senders[s->sender_next++ % (sizeof(s->senders) / sizeof(s->senders[0]))];
	memset(e, 0, sizeof(*e));
	/* A name too long to cache, or more groups than an entry holds: this call only. */
	if (ngroups > SENDER_MAX_GROUPS)
		return -E2BIG;
	if (sender && strlen(sender) < sizeof(e->name))
		snprintf(e->name, sizeof(e->name), "%s", sender);
	e->uid = uid;
	e->gid = gid;
	e->groups_known = ngroups >= 0;
	e->ngroups = ngroups > 0 ? (size_t)ngroups : 0;
	if (e->ngroups)
		memcpy(e->groups, groups, e->ngroups * sizeof(gid_t));
	*ret = e;
	return 0;
}

int auth_sender_ids(struct bus_server *s, sd_bus_message *msg, uid_t *ret_uid, gid_t *ret_gid)
{
	const struct sender_cache_entry *e;
	int r;

	r = sender_entry(s, msg, &e);
	if (r < 0)
		return r;
	*ret_uid = e->uid;
	if (ret_gid)
		*ret_gid = e->gid;
	return 0;
}

int auth_caller(struct bus_server *s, sd_bus_message *msg, struct caller *ret)
{
	const struct sender_cache_entry *e;
	int r;

	r = sender_entry(s, msg, &e);
	if (r < 0)
		return r;
	ret->uid = e->uid;
	ret->gid = e->gid;
	ret->groups_known = e->groups_known;
	ret->ngroups = e->ngroups;
	memcpy(ret->groups, e->groups, e->ngroups * sizeof(gid_t));
	return 0;
}

bool caller_in_group(const struct caller *c, gid_t gid)
{
	/* c->gid may be the passwd entry's guess; the bus's list is what the process has */
	if (!c->groups_known)
		return gid == c->gid;
	for (size_t i = 0; i < c->ngroups; i++)
		if (c->groups[i] == gid)
			return true;
	return false;
}

bool caller_may(const struct caller *c, uint32_t mode, uint32_t uid, uint32_t gid, bool is_dir,
		int want)
{
	uint32_t bits;

	if (c->uid == 0) {
		/* CAP_DAC_OVERRIDE: all but executing a file that no one may execute */
		if (!(want & X_OK) || is_dir)
			return true;
		return (mode & 0111) != 0;
	}
	if (c->uid == uid)
		bits = (mode >> 6) & 7;
	else if (caller_in_group(c, gid))
		bits = (mode >> 3) & 7;
	else
		bits = mode & 7;
	return (bits & (uint32_t)want) == (uint32_t)want;
}

/* One log line for a denied call: who (@uid NULL: unknown), what method, which action, and why. */
static void log_denied(int prio, sd_bus_message *msg, const uid_t *uid, const char *action, const char *why)
{
	const char *sender = sd_bus_message_get_sender(msg);
	const char *iface = sd_bus_message_get_interface(msg);
	const char *member = sd_bus_message_get_member(msg);
	const char *path = sd_bus_message_get_path(msg);
	char who[32] = "an unknown uid";

	if (uid)
		snprintf(who, sizeof(who), "uid %u", (unsigned)*uid);
	log_internal(prio, 0, NULL, "denied %s to %s (%s) calling %s.%s on %s: %s", action, who,
		     sender ? sender : "no bus name", iface ? iface : "?", member ? member : "?", path ? path : "?",
		     why);
}

static void reply_denied(struct auth_pending *p, int prio, const char *why)
{
	p->s->calls_denied++;
	log_denied(prio, p->msg, &p->uid, p->action, why);
	(void)sd_bus_reply_method_errorf(p->msg, FAMFS_ERROR_ACCESS_DENIED,
					 "uid %u is not authorized for %s: %s", (unsigned)p->uid,
					 p->action, why);
}

static int polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct auth_pending *p = userdata;
	const sd_bus_error *e = sd_bus_message_get_error(reply);
	int authorized = 0, challenge = 0;
	int r;

	if (e) {
		if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER,
					   SD_BUS_ERROR_NO_REPLY, SD_BUS_ERROR_TIMEOUT))
			reply_denied(p, LOG_WARNING, "polkit is not available, and without it only root is authorized");
		else {
			char why[300];

			snprintf(why, sizeof(why), "polkit failed: %s", e->message ? e->message : e->name);
			reply_denied(p, LOG_WARNING, why);
		}
		goto out;
	}
	r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
	if (r >= 0)
		r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
	if (r < 0) {
		reply_denied(p, LOG_WARNING, "polkit sent a malformed reply");
		goto out;
	}
	if (!authorized) {
		reply_denied(p, LOG_NOTICE, challenge ? "polkit requires interactive authentication (allow it with --ask-password)"
				   : "polkit said no");
		goto out;
	}
	{
		sd_bus_error err = SD_BUS_ERROR_NULL;

		r = sd_bus_message_rewind(p->msg, true);
		if (r >= 0)
			r = p->cont(p->msg, p->s, &err);
		if (r < 0) {
			if (sd_bus_error_is_set(&err))
				(void)sd_bus_reply_method_error(p->msg, &err);
			else
				(void)sd_bus_reply_method_errno(p->msg, r, NULL);
		}
		sd_bus_error_free(&err);
	}
out:
	sd_bus_message_unref(p->msg);
	free(p);
	return 0;
}

int auth_check(struct bus_server *s, sd_bus_message *msg, const char *action,
	       auth_continue_fn cont, sd_bus_error *e)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
	struct auth_pending *p;
	uid_t uid;
	int r;

	r = auth_sender_ids(s, msg, &uid, NULL);
	if (r < 0) {
		char why[128];

		snprintf(why, sizeof(why), "cannot tell who sent the call: %s", strerror(-r));
		log_denied(LOG_WARNING, msg, NULL, action, why);
		return sd_bus_error_setf(e, FAMFS_ERROR_ACCESS_DENIED,
					 "cannot tell who sent the call: %s", strerror(-r));
	}
	if (uid == 0)
		return cont(msg, s, e);
	if (!s->m->cfg.polkit) {
		s->calls_denied++;
		log_denied(LOG_NOTICE, msg, &uid, action, "polkit is disabled, and without it only root is authorized");
		return sd_bus_error_setf(e, FAMFS_ERROR_ACCESS_DENIED,
					 "uid %u is not authorized for %s: without polkit (disabled) only root is",
					 (unsigned)uid, action);
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->s = s;
	p->cont = cont;
	p->uid = uid;
	snprintf(p->action, sizeof(p->action), "%s", action);
	r = sd_bus_message_new_method_call(s->bus, &call, "org.freedesktop.PolicyKit1",
					   "/org/freedesktop/PolicyKit1/Authority",
					   "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
	if (r >= 0)
		r = sd_bus_message_append(call, "(sa{sv})s", "system-bus-name", 1, "name", "s",
					  sd_bus_message_get_sender(msg), action);
	if (r >= 0)
		r = sd_bus_message_append(call, "a{ss}us", 0,
					  sd_bus_message_get_allow_interactive_authorization(msg) ? 1u : 0u, "");
	if (r >= 0)
		r = sd_bus_call_async(s->bus, NULL, call, polkit_reply, p, POLKIT_TIMEOUT_USEC);
	if (r < 0) {
		char why[128];

		free(p);
		snprintf(why, sizeof(why), "cannot ask polkit: %s", strerror(-r));
		log_denied(LOG_WARNING, msg, &uid, action, why);
		return sd_bus_error_setf(e, FAMFS_ERROR_ACCESS_DENIED,
					 "uid %u is not authorized for %s: cannot ask polkit: %s",
					 (unsigned)uid, action, strerror(-r));
	}
	p->msg = sd_bus_message_ref(msg);
	return 1;   /* the reply follows polkit's */
}
