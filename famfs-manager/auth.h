/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who sent a call, and what it may do: the sender's ids (cached per unique
 * name), file permissions decided as the kernel decides them, and polkit
 * for the actions root may always do.
 */
#ifndef FAMFS_MANAGER_AUTH_H
#define FAMFS_MANAGER_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

struct bus_server;

#define SENDER_MAX_GROUPS 64
#define SENDER_CACHE_SIZE 32

struct sender_cache_entry {
	char name[64];                  /* "" when not cached */
	uid_t uid;
	gid_t gid;
	bool groups_known;              /* the bus told the groups */
	gid_t groups[SENDER_MAX_GROUPS];   /* all the groups it told */
	size_t ngroups;
};

/* Who sent a call, as the bus tells it. */
struct caller {
	uid_t uid;
	gid_t gid;
	bool groups_known;
	gid_t groups[SENDER_MAX_GROUPS];
	size_t ngroups;
};

typedef int (*auth_continue_fn)(sd_bus_message *msg, struct bus_server *s, sd_bus_error *e);
/*
 * Lets root through at once; asks polkit for anyone else (the reply comes
 * later, and then @cont runs); denies when polkit is off or absent.
 */
int auth_check(struct bus_server *s, sd_bus_message *msg, const char *action,
	       auth_continue_fn cont, sd_bus_error *e);
int auth_sender_ids(struct bus_server *s, sd_bus_message *msg, uid_t *ret_uid, gid_t *ret_gid);
/* The sender's uid, gid and supplementary groups; -E2BIG past SENDER_MAX_GROUPS. */
int auth_caller(struct bus_server *s, sd_bus_message *msg, struct caller *ret);
bool caller_in_group(const struct caller *c, gid_t gid);
/*
 * Whether @c may access an inode of @mode, @uid and @gid for @want (R_OK,
 * W_OK, X_OK or'ed) as the kernel's permission check decides: owner, group
 * or other class, and root passes (execution needs some x bit on a file).
 */
bool caller_may(const struct caller *c, uint32_t mode, uint32_t uid, uint32_t gid, bool is_dir,
		int want);

#endif
