/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * famfs-manager: the daemon's state.  One struct manager per process, one
 * struct fsys per attached device.  The format work is libfamfs's; this
 * layer adds roles, health, the log follower, the backend seam and the bus.
 */
#ifndef FAMFS_MANAGER_H
#define FAMFS_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "error.h"
#include "escape.h"
#include "backend.h"
#include "fs.h"
#include "hotplug.h"
#include "logging.h"

#define MANAGER_BUS_NAME   "org.famfs.Manager"
#define MANAGER_PATH       "/org/famfs/Manager"
#define MANAGER_FS_PREFIX  "/org/famfs/Manager/fs"
#define MANAGER_IFACE      "org.famfs.Manager1"
#define FS_IFACE           "org.famfs.FileSystem1"

#define MANAGER_DEFAULT_CONFIG        FAMFS_SYSCONFDIR "/manager.conf"
#define MANAGER_DEFAULT_MOUNT_ROOT    "/run/famfs"
#define MANAGER_DEFAULT_POLL_MS       100
#define MANAGER_DEFAULT_GRACE_MS      2000
#define MANAGER_MAX_DEVICES           64
#define MANAGER_MAX_REASONS           16

/* Thresholds for the degraded health state. */
#define MANAGER_LOG_FULL_PERCENT      90
#define MANAGER_SPACE_FULL_PERCENT    95

enum health {
	HEALTH_OK,
	HEALTH_DEGRADED,
	HEALTH_FAILED,
};

const char *health_name(enum health h);


struct fsys {
	struct manager *m;
	/* the file system as its backend serves it: device, mount point, fs */
	struct backend_target bt;
	char *object_path;

	enum health health;
	char *reasons[MANAGER_MAX_REASONS];
	size_t nreasons;

	char attach_error[FAMFS_ERR_MSG_MAX];   /* why fs is NULL */
	char corrupt[FAMFS_ERR_MSG_MAX];        /* check found damage at attach */
	char header_error[FAMFS_ERR_MSG_MAX];   /* log header went bad while following */
	bool device_gone;
	char media_error[FAMFS_ERR_MSG_MAX];    /* the backend reported a media failure; sticky */
	/* CLOCK_MONOTONIC usec when the follower found the medium changed (fs->medium_change), or 0 */
	uint64_t medium_changed_at;

	/* follower */
	bool stalled;
	uint64_t stall_index;
	uint64_t stall_since;           /* CLOCK_MONOTONIC usec */
	char stall_msg[FAMFS_ERR_MSG_MAX];
	uint64_t invalid_seen;          /* stalls at a new index + refused entries */
	uint64_t torn_retries;          /* ticks spent waiting on an invalid tail */
	uint64_t last_replay;           /* CLOCK_REALTIME usec of the last applied entry */
	bool replay_unstamped;          /* entries applied since last_replay was set */
	uint64_t polls;

	bool announcing;                /* collect new paths for FilesAdded */
	char **pending;
	size_t npending, cpending;
	bool dirty;

	struct fsys *next;
};

struct manager_config {
	char *devices[MANAGER_MAX_DEVICES];
	size_t ndevices;
	char *mount_root;
	uint64_t poll_ms;
	uint64_t grace_ms;
	char *system_uuid_file;
	bool polkit;
	struct hotplug_config hp;       /* udev, automount, backend choice */
};

#define SENDER_MAX_GROUPS 64

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

struct manager {
	sd_event *event;
	sd_bus *bus;
	sd_event_source *timer;
	sd_event_source *flush;
	struct manager_config cfg;
	uint8_t host_uuid[16];
	bool have_host_uuid;
	struct fsys *fsys;
	size_t nfsys;
	struct sender_cache_entry senders[32];
	unsigned sender_next;
	uint64_t calls_denied;
	struct udev_watch *udev_watch;  /* hotplug.c */
	bool module_tried;
	/*
	 * famfs.ko's page fault counters (PTE, PMD, PUD): module-wide, the
	 * module does not attribute faults to a mount.  Read at most once a
	 * second; 0 without the module.
	 */
	uint64_t faults[3];
	uint64_t faults_read_usec;      /* CLOCK_MONOTONIC */
};

/* config.c */
void config_init(struct manager_config *c);
void config_free(struct manager_config *c);
/* Reads an ini file; a missing file is fine unless @must_exist. */
int config_load(struct manager_config *c, const char *path, bool must_exist,
		char *errbuf, size_t errlen);
int config_add_device(struct manager_config *c, const char *path, char *errbuf, size_t errlen);
/* Values as the config file spells them: yes/no, true/false, on/off, 1/0. */
int config_parse_bool(const char *v, bool *ret);
/* Replaces *@dst with a copy of @v. */
int config_set_string(char **dst, const char *v);

/* fsys.c */
int fsys_attach(struct manager *m, const char *device, struct fsys **ret);
struct fsys *fsys_free(struct fsys *f);
/* One follower step; returns whether anything visible changed. */
bool fsys_follow(struct fsys *f);
void fsys_update_health(struct fsys *f);
struct fsys *manager_find_fsys_by_path(struct manager *m, const char *path);
/*
 * Finds the file system @escaped is under and the relative path ("" for its
 * root); @escaped is an absolute path as it comes over the bus, escaped as
 * escape.h says.
 */
int manager_resolve(struct manager *m, const char *escaped, struct fsys **ret_f,
		    char *ret_rel, size_t rel_size, struct famfs_err *err);
void fsys_note_new_node(struct fsys *f, uint32_t node, const struct famfs_log_entry *e);
/*
 * Where to read the attached medium for a check: the backend's coherent
 * view of the superblock region and the log (@readable bytes), or the
 * whole device mapping.
 */
void fsys_medium(struct fsys *f, const uint8_t **base, uint64_t *readable);
/* Closes the file system of @f (its mapping no longer guarded); NULL. */
struct famfs_fs *fsys_close_fs(struct fsys *f);
uint64_t fsys_capacity(const struct fsys *f);
uint64_t fsys_allocated(const struct fsys *f);
uint64_t fsys_free_bytes(const struct fsys *f);
uint64_t fsys_log_used(const struct fsys *f);
uint64_t fsys_log_total(const struct fsys *f);
uint64_t fsys_count(const struct fsys *f, bool dirs);
char *fsys_abspath(const struct fsys *f, const char *rel);


/* bus.c */
int bus_setup(struct manager *m);
int bus_add_fsys(struct manager *m, struct fsys *f);
void bus_flush_changes(struct manager *m);
void bus_schedule_flush(struct manager *m);
/* Re-reads the fault counters (at most once a second) and announces a change. */
void bus_update_faults(struct manager *m);
int bus_error_from_errno(sd_bus_error *e, int r, const char *msg);
/* The a{sv} options of a method call, allowed keys space separated (for the option fuzzer). */
int bus_parse_options(sd_bus_message *msg, const char *allowed, sd_bus_error *e);

/* auth.c */
typedef int (*auth_continue_fn)(sd_bus_message *msg, struct manager *m, sd_bus_error *e);
/*
 * Lets root through at once; asks polkit for anyone else (the reply comes
 * later, and then @cont runs); denies when polkit is off or absent.
 */
int auth_check(struct manager *m, sd_bus_message *msg, const char *action,
	       auth_continue_fn cont, sd_bus_error *e);
int auth_sender_ids(struct manager *m, sd_bus_message *msg, uid_t *ret_uid, gid_t *ret_gid);
/* The sender's uid, gid and supplementary groups; -E2BIG past SENDER_MAX_GROUPS. */
int auth_caller(struct manager *m, sd_bus_message *msg, struct caller *ret);
bool caller_in_group(const struct caller *c, gid_t gid);
/*
 * Whether @c may access an inode of @mode, @uid and @gid for @want (R_OK,
 * W_OK, X_OK or'ed) as the kernel's permission check decides: owner, group
 * or other class, and root passes (execution needs some x bit on a file).
 */
bool caller_may(const struct caller *c, uint32_t mode, uint32_t uid, uint32_t gid, bool is_dir,
		int want);

#endif
