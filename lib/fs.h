/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An attached famfs file system: the device, its validated superblock and
 * log, the namespace and allocator rebuilt from the log, and the cursor up
 * to which the log has been applied.  Replay is incremental: each call reads
 * only the entries appended since the last one.  On the master, files and
 * directories are created here: allocate, append and flush the log entries,
 * and only then add them to the namespace.
 */
#ifndef FAMFS_FS_H
#define FAMFS_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "device.h"
#include "error.h"
#include "findings.h"
#include "log.h"
#include "namespace.h"
#include "omf.h"
#include "repair.h"

/* Most files one batch may create. */
#define FAMFS_BATCH_MAX 65536

/* What famfs_fs_revalidate found, in the order a re-format shows them. */
enum famfs_medium_change {
	FAMFS_MEDIUM_SAME,
	FAMFS_MEDIUM_LOG_RESET,               /* next_index went backwards */
	FAMFS_MEDIUM_SUPERBLOCK_INVALID,      /* destroyed, or mkfs halfway */
	FAMFS_MEDIUM_SUPERBLOCK_CHANGED,      /* another UUID, layout or master */
};

/* Opaque: callers go through the functions below (lib/fs-internal.h has the fields). */
struct famfs_fs;

/*
 * Opens @path (a dax or pmem device or an image), validates the superblock
 * and log header, and prepares an empty namespace; nothing is replayed yet.
 * @host_uuid decides the role (NULL: client).
 */
int famfs_fs_open(const char *path, unsigned device_flags, const uint8_t *host_uuid,
		  struct famfs_fs **ret, struct famfs_err *err);
struct famfs_fs *famfs_fs_close(struct famfs_fs *fs);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct famfs_fs *, famfs_fs_close);

/*
 * What callers outside the library may know of an attached file system.
 * The superblock and log header pointers are into the shared mapping (or
 * the view given to famfs_fs_use_metadata_view): another host can change
 * them at any time, so read them through a validated copy where it matters
 * (famfs_fs_revalidate does).
 */
const struct famfs_device *famfs_fs_device(const struct famfs_fs *fs);
const struct famfs_superblock *famfs_fs_superblock(const struct famfs_fs *fs);
const struct famfs_log_header *famfs_fs_log_header(const struct famfs_fs *fs);
/* The layout as validated at open (device size, log length, allocation unit). */
const struct famfs_layout *famfs_fs_layout(const struct famfs_fs *fs);
const struct famfs_allocator *famfs_fs_allocator(const struct famfs_fs *fs);
/* Seeds interleaved allocation's bucket order (tests and fuzzers want it repeatable). */
void famfs_fs_seed_allocator(struct famfs_fs *fs, uint64_t seed);
struct famfs_ns *famfs_fs_namespace(const struct famfs_fs *fs);
/* This host is the one the superblock names as the master. */
bool famfs_fs_is_master(const struct famfs_fs *fs);
/* Log entries [0, applied) have been read by the replay. */
uint64_t famfs_fs_applied(const struct famfs_fs *fs);

struct famfs_fs_stats {
	uint64_t replayed_total;         /* entries applied over the fs's life */
	uint64_t rejected_total;         /* intact entries refused for breaking a rule */
	uint64_t crosslinked_units;      /* units claimed twice, seen while replaying */
	int64_t last_rejected_index;     /* -1: none */
	const char *last_rejected;       /* why; valid until the next replay */
};
void famfs_fs_get_stats(const struct famfs_fs *fs, struct famfs_fs_stats *ret);

/*
 * What famfs_fs_revalidate found changed ("superblock UUID changed from A
 * to B: ..."), or NULL while the medium is the one that was opened.
 */
const char *famfs_fs_medium_change(const struct famfs_fs *fs);
/* The change found was the log going backwards, the superblock intact. */
bool famfs_fs_medium_change_is_log_reset(const struct famfs_fs *fs);

/*
 * Reads (and, on the master, appends to) the superblock and log through
 * @view instead of the device mapping: @view holds the superblock at 0 and
 * the log at FAMFS_LOG_OFFSET, as a kernel mount's .meta files do.  It must
 * show the superblock and log header the file system was opened on
 * (-EILSEQ otherwise, nothing switched).  NULL goes back to the device
 * mapping.
 */
int famfs_fs_use_metadata_view(struct famfs_fs *fs, uint8_t *view, struct famfs_err *err);

/*
 * Called for each entry applied to the namespace.  @entry is the validated
 * private copy; it is valid only during the call.
 */
typedef void (*famfs_apply_fn)(struct famfs_fs *fs, uint64_t index,
			       const struct famfs_log_entry *entry, uint32_t node, void *userdata);

/*
 * Before it appends, the master catches up with entries other writers on
 * this host appended since the last replay; @fn hears of those as a replay
 * callback would.  Entries the caller itself creates are returned to it and
 * not reported here.
 */
void famfs_fs_set_observer(struct famfs_fs *fs, famfs_apply_fn fn, void *userdata);

/*
 * Reads the superblock and the log header again and compares them with what
 * the file system was opened on: magic, CRC, version and the other rules,
 * the file system UUID, the layout (device size, log length, allocation
 * unit), the master host (the role) and a log that went backwards
 * (next_index below the entries already applied).  On a change it returns
 * -FAMFS_EMEDIUMCHANGED with a message saying what changed, and keeps
 * returning it (with the first message) for the life of @fs: a medium that
 * changed under an attached file system is never written again through it.
 * famfs_fs_replay and every write call this first.
 */
int famfs_fs_revalidate(struct famfs_fs *fs, struct famfs_err *err);

struct famfs_replay_result {
	uint64_t applied;          /* entries added to the namespace by this call */
	uint64_t rejected;         /* intact entries skipped for good */
	bool stalled;              /* stopped at an entry failing integrity */
	uint64_t stalled_index;
	enum famfs_finding_code stall_code;
	char stall_msg[FAMFS_ERR_MSG_MAX];
};

/*
 * Applies the entries appended since the last call.  The header and each
 * entry are invalidated from the CPU cache and copied before they are
 * trusted.  An entry that fails its seqnum or CRC check may be a write in
 * flight: replay stops before it and the next call retries.  An intact
 * entry that breaks a rule (bad path, extents, duplicate, missing parent) is
 * skipped and counted, never created.  Returns -EIO with a message when the
 * log header itself has become invalid, or when an image file has shrunk
 * under its mapping (reading it would raise SIGBUS).
 */
int famfs_fs_replay(struct famfs_fs *fs, famfs_apply_fn fn, void *userdata,
		    struct famfs_replay_result *res, struct famfs_err *err);

/*
 * A look between replays that costs one cache line: whether the log
 * header's next_index differs from the one the last famfs_fs_replay read
 * (entries appended, or the log reset).  Only a hint for when to replay:
 * it sees no superblock change and no entry that was still being written,
 * which the next replay does.
 */
bool famfs_fs_log_moved(const struct famfs_fs *fs);

struct famfs_file_spec {
	const char *relpath;
	uint64_t size;
	uint32_t mode;
	uint32_t uid;
	uint32_t gid;
	const struct famfs_interleave_params *interleave;   /* NULL: contiguous */
	const char *display_path;   /* how batch errors name it (NULL: the quoted relpath) */
};

/*
 * Creates @n files under one lock and one log append: all or nothing.
 * Every spec is checked and every file allocated first; then each entry
 * must pass the rules replay and fsck hold entries to
 * (famfs_log_entry_check_semantics) and claim only free space; only then
 * is anything written.  A refused batch leaves the log, the superblock and
 * the allocator as they were.  In a batch of more than one the message
 * starts with the element it is about: "element 3 (NAME): ...", NAME the
 * spec's display_path or its quoted relpath; a single file's message names
 * its relpath.
 * Errors: -FAMFS_EMEDIUMCHANGED (see famfs_fs_revalidate), -EPERM not the
 * master, -EINVAL bad path or size 0, -EFBIG a size
 * whose extents overflow 64 bits, -ERANGE an entry a reader would refuse
 * (a bug caught before it reaches the log), -EEXIST, -ENOENT/-ENOTDIR
 * parent, -ENOSPC, -FAMFS_ELOGFULL, -E2BIG more than FAMFS_BATCH_MAX.
 * @ret_maps and @ret_nodes (each may be NULL) receive one item per file.
 */
int famfs_fs_create_files(struct famfs_fs *fs, const struct famfs_file_spec *specs, size_t n,
			  struct famfs_fmap *ret_maps, uint32_t *ret_nodes, struct famfs_err *err);

/* Creates a directory; with @parents, missing parents too and no error if it exists. */
int famfs_fs_mkdir(struct famfs_fs *fs, const char *relpath, uint32_t mode, uint32_t uid,
		   uint32_t gid, bool parents, uint32_t *ret_node, struct famfs_err *err);

/*
 * The log entry that created a node, in the shared mapping.  Entries never
 * change once written, but a misbehaving writer could change one: code that
 * hands extents to someone else should use famfs_fs_read_entry().
 */
const struct famfs_log_entry *famfs_fs_entry(const struct famfs_fs *fs, uint32_t node);

/*
 * Copies the entry that created @node and checks it again (integrity, the
 * entry's own rules, so its extents lie inside the data area, and that it
 * still names the node's path, type, size, mode and owner); -EIO when it no
 * longer passes.
 */
int famfs_fs_read_entry(struct famfs_fs *fs, uint32_t node, struct famfs_log_entry *ret,
			struct famfs_err *err);

/*
 * The same without the CRC, for the kernel backend instantiating nodes
 * after the replay (an adopted mount, CreateFile): the copy must still pass
 * the entry's rules and describe the node it was replayed as (path, type,
 * size, mode, owner), so no map into the metadata or for another name gets
 * out.
 * A rewrite can always fix up a CRC; the random damage only a CRC catches is
 * reported by the check that runs at every attach.
 */
int famfs_fs_copy_entry(struct famfs_fs *fs, uint32_t node, struct famfs_log_entry *ret,
			struct famfs_err *err);

/*
 * The safe repair of a torn tail (repair.h) on the master, under the log
 * lock taken without waiting (-EBUSY when another writer holds it):
 * -EPERM on a client, -EAGAIN when the log changed since @plan was made.
 */
int famfs_fs_repair_tail(struct famfs_fs *fs, const struct famfs_check_repair *plan,
			 struct famfs_repair_action ret_actions[FAMFS_REPAIR_MAX_ACTIONS], size_t *ret_n,
			 struct famfs_err *err);

/* Takes or drops the host-local log lock (flock on the device). */
int famfs_fs_lock(struct famfs_fs *fs, struct famfs_err *err);
void famfs_fs_unlock(struct famfs_fs *fs);

#endif
