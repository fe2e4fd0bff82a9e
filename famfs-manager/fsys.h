/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One attached file system: attach (check, open, plan, replay, backend),
 * the log follower, health, and the numbers the bus shows.  It knows
 * nothing of the other file systems (manager.h keeps the set) nor of the
 * bus: what changed is marked dirty, and new paths are collected for the
 * caller to announce.
 */
#ifndef FAMFS_MANAGER_FSYS_H
#define FAMFS_MANAGER_FSYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attach-policy.h"
#include "backend.h"
#include "error.h"
#include "fs.h"
#include "logging.h"

#define FSYS_MAX_REASONS           16

/* Thresholds for the degraded health state. */
#define FSYS_LOG_FULL_PERCENT      90
#define FSYS_SPACE_FULL_PERCENT    95

enum health {
	HEALTH_OK,
	HEALTH_DEGRADED,
	HEALTH_FAILED,
};

const char *health_name(enum health h);

struct attach_rest;

struct fsys {
	/* the file system as its backend serves it: device, mount point, fs */
	struct backend_target bt;
	char *object_path;              /* its identity: the uuid, or the device without one */
	uint64_t grace_usec;            /* how long an invalid log tail may stall the follower */

	enum health health;
	char *reasons[FSYS_MAX_REASONS];
	size_t nreasons;

	char attach_error[FAMFS_ERR_MSG_MAX];   /* why fs is NULL */
	char corrupt[FAMFS_ERR_MSG_MAX];        /* check found damage at attach */
	char header_error[FAMFS_ERR_MSG_MAX];   /* log header went bad while following */
	bool device_gone;
	char media_error[FAMFS_ERR_MSG_MAX];    /* the backend reported a media failure; sticky */
	/* CLOCK_MONOTONIC usec when the follower found the medium changed, or 0 */
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

	struct attach_rest *rest;       /* an attach waiting for fsys_finish_attach, or NULL */

	struct fsys *next;
};

struct fsys_attach_args {
	const char *device;
	const char *mountpoint;         /* unless the plan names another */
	const uint8_t *host_uuid;       /* this host's system UUID, or NULL: a client */
	uint64_t grace_ms;
	struct attach_policy *policy;
	const struct attach_override *override;   /* an operator's Attach, or NULL */
	/*
	 * When the backend adopts a mount that already serves the files (the
	 * kernel backend after a restart), leave the replay, the backend's
	 * attach and the check's verdict to fsys_finish_attach: the daemon's
	 * start calls it before the event loop answers anything.
	 */
	bool defer_replay;
};

/*
 * Attaches @a->device: a file system that cannot be opened or served is
 * still returned, failed, with the reason (attach_error); -errno only when
 * out of memory.
 */
int fsys_attach(const struct fsys_attach_args *a, struct fsys **ret);
/* Finishes an attach left waiting (defer_replay); does nothing otherwise. */
void fsys_finish_attach(struct fsys *f);
bool fsys_attach_waiting(const struct fsys *f);
struct fsys *fsys_free(struct fsys *f);
/*
 * Whether processes other than this one hold a file, a mapping or a
 * working directory in @f's kernel mount: 1 with who in @buf, 0 when none
 * (always for the view backend), or -errno.
 */
int fsys_in_use(struct fsys *f, char *buf, size_t len);
/* Detaches safely, the object kept: health failed, @reason the only reason. */
void fsys_detach(struct fsys *f, const char *reason);

/* One follower step; returns whether anything visible changed. */
bool fsys_follow(struct fsys *f);
void fsys_update_health(struct fsys *f);
void fsys_note_new_node(struct fsys *f, uint32_t node, const struct famfs_log_entry *e);
/* Forgets the paths collected for FilesAdded (pending[0..npending)), once announced. */
void fsys_clear_pending(struct fsys *f);
/* The follower found the medium changed at least @usec ago. */
bool fsys_medium_changed_for(const struct fsys *f, uint64_t usec);

/*
 * Where to read the attached medium for a check: the backend's coherent
 * view of the superblock region and the log (@readable bytes), or the
 * whole device mapping.
 */
void fsys_medium(struct fsys *f, const uint8_t **base, uint64_t *readable);

/* NULL when the file system could not be attached or was detached. */
static inline struct famfs_fs *fsys_fs(const struct fsys *f)
{
	return f->bt.fs;
}
/* What names @f in log lines: its mount point, else its uuid or device. */
const char *fsys_name(const struct fsys *f);
/* A log line about @f, prefixed with fsys_name(@f). */
#define log_fs(prio, f, ...)                log_about(prio, fsys_name(f), __VA_ARGS__)
#define log_fs_errno(prio, error, f, ...)   log_about_errno(prio, error, fsys_name(f), __VA_ARGS__)
const char *fsys_role(const struct fsys *f);    /* "master", "client" or "unknown" */
struct famfs_ns *fsys_namespace(const struct fsys *f);
uint64_t fsys_capacity(const struct fsys *f);
uint64_t fsys_allocated(const struct fsys *f);
uint64_t fsys_free_bytes(const struct fsys *f);
uint64_t fsys_log_used(const struct fsys *f);
uint64_t fsys_log_total(const struct fsys *f);
uint64_t fsys_replayed_total(const struct fsys *f);
uint64_t fsys_count(const struct fsys *f, bool dirs);
char *fsys_abspath(const struct fsys *f, const char *rel);

#endif
