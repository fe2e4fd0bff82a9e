// SPDX-License-Identifier: LGPL-2.1-or-later
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <uuid/uuid.h>

#include "cache.h"
#include "fs-internal.h"
#include "path.h"
#include "superblock.h"

int famfs_fs_open(const char *path, unsigned device_flags, const uint8_t *host_uuid,
		  struct famfs_fs **ret, struct famfs_err *err)
{
	_cleanup_(famfs_fs_closep) struct famfs_fs *fs = NULL;
	enum famfs_finding_code code;
	int r;

	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return famfs_err_set(err, -ENOMEM, "out of memory");
	fs->last_rejected_index = -1;
	r = famfs_device_open(path, device_flags & ~FAMFS_DEVICE_NOMAP, &fs->dev, err);
	if (r < 0)
		return r;
	fs->sb = (struct famfs_superblock *)fs->dev->base;
	famfs_cache_invalidate(fs->sb, sizeof(*fs->sb));
	code = famfs_superblock_validate(fs->sb, fs->dev->size, err);
	if (code != FAMFS_OK) {
		famfs_err_prefix(err, "%s", path);
		return -EUCLEAN;
	}
	memcpy(&fs->sb_at_open, fs->sb, sizeof(fs->sb_at_open));
	fs->layout.dev_size = fs->sb->dev_size;
	fs->layout.log_len = fs->sb->log_len;
	fs->layout.alloc_unit = fs->sb->alloc_unit;
	fs->log = (struct famfs_log_header *)(fs->dev->base + FAMFS_LOG_OFFSET);
	famfs_cache_invalidate(fs->log, sizeof(*fs->log));
	code = famfs_log_header_validate(fs->log, fs->sb->log_len, err);
	if (code != FAMFS_OK) {
		famfs_err_prefix(err, "%s", path);
		return -EUCLEAN;
	}
	fs->master = host_uuid && memcmp(host_uuid, fs->sb->system_uuid, 16) == 0;
	r = famfs_alloc_init(&fs->alloc, fs->layout.dev_size, fs->layout.log_len);
	if (r == 0)
		r = famfs_ns_new(&fs->ns);
	if (r < 0)
		return famfs_err_set(err, r, "out of memory");
	*ret = TAKE_PTR(fs);
	return 0;
}

struct famfs_fs *famfs_fs_close(struct famfs_fs *fs)
{
	if (!fs)
		return NULL;
	famfs_alloc_destroy(&fs->alloc);
	famfs_ns_free(fs->ns);
	famfs_device_close(fs->dev);
	free(fs);
	return NULL;
}

const struct famfs_device *famfs_fs_device(const struct famfs_fs *fs)
{
	return fs->dev;
}

const struct famfs_superblock *famfs_fs_superblock(const struct famfs_fs *fs)
{
	return fs->sb;
}

const struct famfs_log_header *famfs_fs_log_header(const struct famfs_fs *fs)
{
	return fs->log;
}

const struct famfs_layout *famfs_fs_layout(const struct famfs_fs *fs)
{
	return &fs->layout;
}

const struct famfs_allocator *famfs_fs_allocator(const struct famfs_fs *fs)
{
	return &fs->alloc;
}

void famfs_fs_seed_allocator(struct famfs_fs *fs, uint64_t seed)
{
	famfs_alloc_seed(&fs->alloc, seed);
}

struct famfs_ns *famfs_fs_namespace(const struct famfs_fs *fs)
{
	return fs->ns;
}

bool famfs_fs_is_master(const struct famfs_fs *fs)
{
	return fs->master;
}

uint64_t famfs_fs_applied(const struct famfs_fs *fs)
{
	return fs->applied;
}

void famfs_fs_get_stats(const struct famfs_fs *fs, struct famfs_fs_stats *ret)
{
	ret->replayed_total = fs->replayed_total;
	ret->rejected_total = fs->rejected_total;
	ret->crosslinked_units = fs->crosslinked_units;
	ret->last_rejected_index = fs->last_rejected_index;
	ret->last_rejected = fs->last_rejected;
}

const char *famfs_fs_medium_change(const struct famfs_fs *fs)
{
	return fs->medium_change_kind != FAMFS_MEDIUM_SAME ? fs->medium_change : NULL;
}

bool famfs_fs_medium_change_is_log_reset(const struct famfs_fs *fs)
{
	return fs->medium_change_kind == FAMFS_MEDIUM_LOG_RESET;
}

int famfs_fs_use_metadata_view(struct famfs_fs *fs, uint8_t *view, struct famfs_err *err)
{
	const struct famfs_superblock *sb;
	const struct famfs_log_header *lh;

	if (!view) {
		fs->sb = (struct famfs_superblock *)fs->dev->base;
		fs->log = (struct famfs_log_header *)(fs->dev->base + FAMFS_LOG_OFFSET);
		return 0;
	}
	sb = (const struct famfs_superblock *)view;
	lh = (const struct famfs_log_header *)(view + FAMFS_LOG_OFFSET);
	famfs_cache_invalidate(sb, sizeof(*sb));
	famfs_cache_invalidate(lh, sizeof(*lh));
	if (sb->magic != fs->sb_at_open.magic || memcmp(sb->uuid, fs->sb_at_open.uuid, 16) != 0 ||
	    lh->magic != fs->log->magic || lh->len != fs->log->len ||
	    lh->last_index != fs->log->last_index)
		return famfs_err_set(err, -EILSEQ,
				     "the metadata view does not show the superblock and log read from %s",
				     fs->dev->path);
	fs->sb = (struct famfs_superblock *)view;
	fs->log = (struct famfs_log_header *)(view + FAMFS_LOG_OFFSET);
	return 0;
}

int famfs_fs_lock(struct famfs_fs *fs, struct famfs_err *err)
{
	if (flock(fs->dev->fd, LOCK_EX) < 0)
		return famfs_err_set(err, -errno, "cannot lock the log of %s: %s",
				     fs->dev->path, strerror(errno));
	return 0;
}

void famfs_fs_unlock(struct famfs_fs *fs)
{
	(void)flock(fs->dev->fd, LOCK_UN);
}

static void note_rejected(struct famfs_fs *fs, struct famfs_replay_result *res, uint64_t i,
			  const char *msg)
{
	res->rejected++;
	fs->rejected_total++;
	fs->last_rejected_index = i;
	snprintf(fs->last_rejected, sizeof(fs->last_rejected), "log entry %" PRIu64 ": %s", i, msg);
}

/* Applies one intact entry; false when it breaks a rule. */
static bool apply_entry(struct famfs_fs *fs, uint64_t i, const struct famfs_log_entry *e,
			uint32_t *node, struct famfs_err *err)
{
	enum famfs_finding_code code;
	bool extents_sound = false;
	int r;

	if (e->type == FAMFS_LOG_FILE)
		code = famfs_file_entry_check(e, &fs->layout, &extents_sound, err);
	else
		code = famfs_log_entry_check_semantics(e, &fs->layout, err);
	/* Its space stays claimed even when the file is refused. */
	if (extents_sound)
		fs->crosslinked_units += famfs_alloc_mark_file(&fs->alloc, &e->file);
	if (code == FAMFS_F_DELETE_ENTRY || (code == FAMFS_OK && e->type == FAMFS_LOG_ADD_DAXDEV)) {
		*node = FAMFS_NS_NONE;
		return true;   /* nothing to apply */
	}
	if (code != FAMFS_OK)
		return false;
	if (e->type == FAMFS_LOG_FILE)
		r = famfs_ns_add(fs->ns, e->file.relpath, FAMFS_NS_FILE, e->file.mode, e->file.uid,
				 e->file.gid, e->file.size, i, node);
	else
		r = famfs_ns_add(fs->ns, e->mkdir.relpath, FAMFS_NS_DIR, e->mkdir.mode, e->mkdir.uid,
				 e->mkdir.gid, 0, i, node);
	if (r < 0) {
		famfs_err_set(err, r, "\"%s\": %s", famfs_entry_relpath(e),
			      r == -EEXIST ? "created twice" :
			      r == -ENOENT ? "parent directory does not exist" :
			      r == -ENOTDIR ? "parent is a file" : strerror(-r));
		return false;
	}
	return true;
}

void famfs_fs_set_observer(struct famfs_fs *fs, famfs_apply_fn fn, void *userdata)
{
	fs->observer = fn;
	fs->observer_data = userdata;
}

/* An image file cut shorter than its mapping would fault on access. */
static int check_not_shrunk(const struct famfs_fs *fs, struct famfs_err *err)
{
	struct stat st;

	if (fs->dev->kind != FAMFS_DEVICE_IMAGE)
		return 0;
	if (fstat(fs->dev->fd, &st) < 0)
		return famfs_err_set(err, -EIO, "%s: cannot stat the image: %s", fs->dev->path, strerror(errno));
	if ((uint64_t)st.st_size < fs->dev->size)
		return famfs_err_set(err, -EIO, "%s: the image shrank to %jd bytes (it had %" PRIu64
				     "); not reading it", fs->dev->path, (intmax_t)st.st_size, fs->dev->size);
	return 0;
}

/* Image files live in the page cache, which is coherent: nothing to invalidate. */
static void invalidate(const struct famfs_fs *fs, const void *p, size_t len)
{
	if (fs->dev->kind != FAMFS_DEVICE_IMAGE)
		famfs_cache_invalidate(p, len);
}

/* What changed between the superblock at open (@was) and @now, or false. */
static bool superblock_changed(const struct famfs_superblock *was, const struct famfs_superblock *now,
			       char *why, size_t len)
{
	static const struct {
		const char *name;
		size_t offset;
	} fields[] = {
		{ "version", offsetof(struct famfs_superblock, version) },
		{ "log length", offsetof(struct famfs_superblock, log_len) },
		{ "allocation unit", offsetof(struct famfs_superblock, alloc_unit) },
		{ "device size", offsetof(struct famfs_superblock, dev_size) },
	};
	char a[37], b[37];

	if (memcmp(was->uuid, now->uuid, 16) != 0) {
		uuid_unparse_lower(was->uuid, a);
		uuid_unparse_lower(now->uuid, b);
		snprintf(why, len, "superblock UUID changed from %s to %s: the device was re-formatted", a, b);
		return true;
	}
	for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
		uint64_t x, y;

		memcpy(&x, (const uint8_t *)was + fields[k].offset, sizeof(x));
		memcpy(&y, (const uint8_t *)now + fields[k].offset, sizeof(y));
		if (x != y) {
			snprintf(why, len, "superblock %s changed from %" PRIu64 " to %" PRIu64
				 ": the device was re-formatted", fields[k].name, x, y);
			return true;
		}
	}
	if (was->omf_major != now->omf_major || was->omf_minor != now->omf_minor) {
		snprintf(why, len, "superblock OMF version changed from %u.%u to %u.%u: the device was re-formatted",
			 was->omf_major, was->omf_minor, now->omf_major, now->omf_minor);
		return true;
	}
	if (memcmp(was->system_uuid, now->system_uuid, 16) != 0) {
		uuid_unparse_lower(was->system_uuid, a);
		uuid_unparse_lower(now->system_uuid, b);
		snprintf(why, len, "superblock master host changed from %s to %s: the role decided at attach no longer holds",
			 a, b);
		return true;
	}
	return false;
}

static void invalidate(const struct famfs_fs *fs, const void *p, size_t len);

int famfs_fs_revalidate(struct famfs_fs *fs, struct famfs_err *err)
{
	struct famfs_superblock sb;
	struct famfs_log_header h;
	struct famfs_err why = { 0 };
	char change[FAMFS_ERR_MSG_MAX] = "";
	enum famfs_medium_change kind = FAMFS_MEDIUM_SAME;

	invalidate(fs, fs->sb, sizeof(*fs->sb));
	memcpy(&sb, fs->sb, sizeof(sb));
	invalidate(fs, fs->log, sizeof(*fs->log));
	memcpy(&h, fs->log, sizeof(h));
	if (famfs_superblock_validate(&sb, fs->dev->size, &why) != FAMFS_OK) {
		kind = FAMFS_MEDIUM_SUPERBLOCK_INVALID;
		snprintf(change, sizeof(change), "superblock no longer valid (%s): the file system was destroyed "
			 "or the device re-formatted", why.msg);
	} else if (superblock_changed(&fs->sb_at_open, &sb, change, sizeof(change))) {
		kind = FAMFS_MEDIUM_SUPERBLOCK_CHANGED;
	} else if (famfs_log_header_validate(&h, fs->layout.log_len, &why) == FAMFS_OK &&
		   h.next_index < fs->applied) {
		kind = FAMFS_MEDIUM_LOG_RESET;
		snprintf(change, sizeof(change), "log went backwards: next_index %" PRIu64 " is below the %" PRIu64
			 " entries already applied: the log was reset or the device re-formatted",
			 h.next_index, fs->applied);
	}
	/*
	 * A header that no longer validates is the replay's error, not a
	 * change of medium.  mkfs writes the new log first, then clears the
	 * superblock and writes the new one: a poll can see a reset log, then
	 * no superblock, then another file system's.  Each later stage says
	 * more than the one before and replaces its message; the medium stays
	 * changed whatever it shows afterwards.
	 */
	if (kind > fs->medium_change_kind) {
		snprintf(fs->medium_change, sizeof(fs->medium_change), "%s", change);
		fs->medium_change_kind = kind;
	}
	if (fs->medium_change_kind != FAMFS_MEDIUM_SAME)
		return famfs_err_set(err, -FAMFS_EMEDIUMCHANGED, "%s: %s", fs->dev->path, fs->medium_change);
	return 0;
}

bool famfs_fs_log_moved(const struct famfs_fs *fs)
{
	uint64_t next;

	invalidate(fs, &fs->log->next_index, sizeof(fs->log->next_index));
	memcpy(&next, &fs->log->next_index, sizeof(next));
	return next != fs->replayed_next_index;
}

int famfs_fs_replay(struct famfs_fs *fs, famfs_apply_fn fn, void *userdata,
		    struct famfs_replay_result *res, struct famfs_err *err)
{
	struct famfs_log_entry *slots = famfs_log_entries(fs->log);
	struct famfs_replay_result local;
	enum famfs_finding_code code;
	struct famfs_log_header h;
	struct famfs_log_entry e;
	uint64_t first = fs->applied, n;

	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));
	if (check_not_shrunk(fs, err) < 0)
		return -EIO;
	if (famfs_fs_revalidate(fs, err) < 0)
		return -FAMFS_EMEDIUMCHANGED;
	invalidate(fs, fs->log, sizeof(*fs->log));
	memcpy(&h, fs->log, sizeof(h));
	code = famfs_log_header_validate(&h, fs->layout.log_len, err);
	if (code != FAMFS_OK) {
		famfs_err_prefix(err, "%s", fs->dev->path);
		return -EIO;
	}
	fs->replayed_next_index = h.next_index;
	if (h.next_index <= first)
		return 0;
	n = h.next_index - first;
	if (n > 1) {
		/* One madvise instead of a page fault per 4 KiB; a failure only costs time. */
		famfs_device_prefault(&slots[first], n * sizeof(*slots));
		(void)famfs_ns_reserve(fs->ns, n);
	}

	/*
	 * Each entry is invalidated, copied into @e and checked there, so what
	 * was validated is what is applied even if the shared memory changes.
	 * One entry at a time: a buffer for many would cost fresh zeroed pages
	 * (and a copy of the whole log one per 4 KiB), which in a VM is most of
	 * the replay.
	 */
	for (uint64_t k = 0; k < n; k++) {
		uint64_t i = first + k;
		struct famfs_err why = { 0 };
		uint32_t node;

		invalidate(fs, &slots[i], sizeof(slots[i]));
		memcpy(&e, &slots[i], sizeof(e));
		code = famfs_log_entry_check_integrity(&e, i, &why);
		if (code != FAMFS_OK) {
			res->stalled = true;
			res->stalled_index = i;
			res->stall_code = code;
			memcpy(res->stall_msg, why.msg, sizeof(res->stall_msg));
			break;
		}
		fs->applied = i + 1;
		if (!apply_entry(fs, i, &e, &node, &why)) {
			note_rejected(fs, res, i, why.msg);
			continue;
		}
		if (node == FAMFS_NS_NONE)
			continue;
		res->applied++;
		fs->replayed_total++;
		if (fn)
			fn(fs, i, &e, node, userdata);
	}
	return 0;
}

const struct famfs_log_entry *famfs_fs_entry(const struct famfs_fs *fs, uint32_t node)
{
	const struct famfs_ns_node *n = famfs_ns_node(fs->ns, node);

	if (!n || n->index < 0)
		return NULL;
	return &famfs_log_entries(fs->log)[n->index];
}

/* Whether a re-read entry still describes the node it was replayed as. */
static bool entry_matches_node(const struct famfs_log_entry *e, const struct famfs_ns_node *n)
{
	const char *relpath = famfs_entry_relpath(e);

	if (strlen(relpath) != n->path_len || memcmp(relpath, n->path, n->path_len) != 0)
		return false;
	if (e->type == FAMFS_LOG_FILE)
		return n->kind == FAMFS_NS_FILE && e->file.size == n->size && e->file.mode == n->mode &&
		       e->file.uid == n->uid && e->file.gid == n->gid;
	return e->type == FAMFS_LOG_MKDIR && n->kind == FAMFS_NS_DIR && e->mkdir.mode == n->mode &&
	       e->mkdir.uid == n->uid && e->mkdir.gid == n->gid;
}

static int reread_entry(struct famfs_fs *fs, uint32_t node, bool with_crc, struct famfs_log_entry *ret,
			struct famfs_err *err)
{
	const struct famfs_ns_node *n = famfs_ns_node(fs->ns, node);
	struct famfs_log_entry *slot;

	if (!n || n->index < 0)
		return famfs_err_set(err, -ENOENT, "no log entry for this node");
	slot = &famfs_log_entries(fs->log)[n->index];
	invalidate(fs, slot, sizeof(*slot));
	memcpy(ret, slot, sizeof(*ret));
	if ((with_crc && famfs_log_entry_check_integrity(ret, n->index, err) != FAMFS_OK) ||
	    famfs_log_entry_check_semantics(ret, &fs->layout, err) != FAMFS_OK) {
		famfs_err_prefix(err, "%s: log entry %" PRId64 " changed after it was replayed",
				 fs->dev->path, n->index);
		return -EIO;
	}
	if (!entry_matches_node(ret, n))
		return famfs_err_set(err, -EIO, "%s: log entry %" PRId64 " changed after it was replayed: "
				     "it no longer describes \"%s\" as replayed", fs->dev->path, n->index,
				     n->path);
	return 0;
}

int famfs_fs_read_entry(struct famfs_fs *fs, uint32_t node, struct famfs_log_entry *ret,
			struct famfs_err *err)
{
	return reread_entry(fs, node, true, ret, err);
}

int famfs_fs_copy_entry(struct famfs_fs *fs, uint32_t node, struct famfs_log_entry *ret,
			struct famfs_err *err)
{
	return reread_entry(fs, node, false, ret, err);
}

struct batch_name {
	const char *relpath;
	size_t index;
};

static int cmp_batch_name(const void *a, const void *b)
{
	const struct batch_name *x = a, *y = b;
	int c = strcmp(x->relpath, y->relpath);

	if (c != 0)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int check_new_path(struct famfs_fs *fs, const char *relpath, struct famfs_err *err)
{
	size_t len = strlen(relpath), plen = famfs_path_parent_len(relpath, len);
	uint32_t parent;

	if (famfs_path_check(relpath, err) != FAMFS_OK)
		return err ? err->code : -EINVAL;
	if (famfs_ns_lookup(fs->ns, relpath, len) != FAMFS_NS_NONE)
		return famfs_err_set(err, -EEXIST, "\"%s\" already exists", relpath);
	parent = famfs_ns_lookup(fs->ns, relpath, plen);
	if (parent == FAMFS_NS_NONE)
		return famfs_err_set(err, -ENOENT, "parent directory \"%.*s\" of \"%s\" does not exist",
				     (int)plen, relpath, relpath);
	if (famfs_ns_node(fs->ns, parent)->kind != FAMFS_NS_DIR)
		return famfs_err_set(err, -ENOTDIR, "parent \"%.*s\" of \"%s\" is a file",
				     (int)plen, relpath, relpath);
	return 0;
}

/*
 * The last step of every change: the medium may have been re-formatted by
 * another host since begin_write, so it is checked again; then @n entries
 * (checked by check_before_append) go into the log and are applied as this
 * host's own.
 */
static int append_own(struct famfs_fs *fs, struct famfs_log_entry *entries, size_t n, uint32_t *ret_nodes,
		      struct famfs_err *err)
{
	struct famfs_log_entry *slots = famfs_log_entries(fs->log);
	uint64_t first;
	int r;

	r = famfs_fs_revalidate(fs, err);
	if (r < 0)
		return r;
	first = fs->log->next_index;
	r = famfs_log_append(fs->log, entries, n, err);
	if (r < 0)
		return r;
	/* Our own entries: a peek (famfs_fs_log_moved) need not replay them. */
	if (fs->replayed_next_index == first)
		fs->replayed_next_index = first + n;
	for (size_t k = 0; k < n; k++) {
		uint32_t node;

		if (!apply_entry(fs, first + k, &slots[first + k], &node, err))
			return -EIO;   /* validated before the append: cannot happen */
		fs->applied = first + k + 1;
		fs->replayed_total++;
		if (ret_nodes)
			ret_nodes[k] = node;
	}
	return 0;
}

static int catch_up(struct famfs_fs *fs, struct famfs_err *err)
{
	struct famfs_replay_result res;
	int r;

	r = famfs_fs_replay(fs, fs->observer, fs->observer_data, &res, err);
	if (r < 0)
		return r;
	if (res.stalled)
		return famfs_err_set(err, -EIO, "%s: the log has an invalid entry at index %" PRIu64
				     " (%s); refusing to append after it", fs->dev->path,
				     res.stalled_index, res.stall_msg);
	return 0;
}

/*
 * What every change to the log starts with: this host must be the master
 * and hold the device writable; then the log lock is taken and the
 * namespace caught up with entries other writers appended.  On success the
 * caller holds the lock.
 */
static int begin_write(struct famfs_fs *fs, struct famfs_err *err)
{
	int r;

	if (!fs->master)
		return famfs_err_set(err, -EPERM, "%s: this host is not the master of the file system",
				     fs->dev->path);
	if (!fs->dev->writable)
		return famfs_err_set(err, -EROFS, "%s is open read-only", fs->dev->path);
	r = famfs_fs_lock(fs, err);
	if (r < 0)
		return r;
	r = catch_up(fs, err);
	if (r < 0)
		famfs_fs_unlock(fs);
	return r;
}

/*
 * Prefixes @err with the element of the batch it is about: "element 3
 * (NAME)".  A batch of one is named by its relpath, unless the message
 * already does: the caller knows which file it asked for.
 */
static void name_element(struct famfs_err *err, const struct famfs_file_spec *specs, size_t n, size_t k,
			 bool message_names_path)
{
	if (n > 1 && specs[k].display_path)
		famfs_err_prefix(err, "element %zu (%s)", k, specs[k].display_path);
	else if (n > 1)
		famfs_err_prefix(err, "element %zu (\"%s\")", k, specs[k].relpath);
	else if (!message_names_path)
		famfs_err_prefix(err, "\"%s\"", specs[k].relpath);
}

/*
 * The last gate before the log: each entry must pass the very rules replay
 * and fsck hold it to (famfs_log_entry_check_semantics), and a FILE entry
 * must claim only free units, none shared with another entry of the batch,
 * so that no reader refuses what is written or finds a cross-link in it.
 * Called with the batch's space not marked in the allocator; leaves it so.
 * On failure *ret_bad is the entry at fault.
 */
static int check_before_append(struct famfs_fs *fs, const struct famfs_log_entry *entries, size_t n,
			       size_t *ret_bad, struct famfs_err *err)
{
	enum famfs_finding_code code;
	size_t claimed = 0;
	int r = 0;

	for (size_t k = 0; k < n && r == 0; k++) {
		code = famfs_log_entry_check_semantics(&entries[k], &fs->layout, err);
		if (code != FAMFS_OK) {
			/* A bad name is the caller's; anything else is a map this library got wrong. */
			r = famfs_path_check_field(famfs_entry_relpath(&entries[k]), NULL) != FAMFS_OK ?
			    -EINVAL : -ERANGE;
			famfs_err_prefix(err, "refused before it reached the log");
			if (err)
				err->code = r;
		} else if (entries[k].type == FAMFS_LOG_FILE) {
			if (!famfs_alloc_claim_file(&fs->alloc, &entries[k].file))
				r = famfs_err_set(err, -ERANGE, "refused before it reached the log: "
						  "its extents overlap space already in use");
			else
				claimed = k + 1;
		}
		if (r < 0)
			*ret_bad = k;
	}
	/* append_own marks the space again once the entries are in the log. */
	for (size_t k = 0; k < claimed; k++)
		if (entries[k].type == FAMFS_LOG_FILE)
			famfs_alloc_unmark_file(&fs->alloc, &entries[k].file);
	return r;
}

static int check_new_file(struct famfs_fs *fs, const struct famfs_file_spec *s, struct famfs_err *err)
{
	if (s->size == 0)
		return famfs_err_set(err, -EINVAL, "\"%s\": size 0 (famfs files are preallocated: give a size)",
				     s->relpath);
	return check_new_path(fs, s->relpath, err);
}

int famfs_fs_create_files(struct famfs_fs *fs, const struct famfs_file_spec *specs, size_t n,
			  struct famfs_fmap *ret_maps, uint32_t *ret_nodes, struct famfs_err *err)
{
	struct famfs_log_entry *entries = NULL;
	struct famfs_fmap *maps = NULL;
	struct batch_name *sorted = NULL;
	size_t allocated = 0, bad;
	int r;

	if (n > FAMFS_BATCH_MAX)
		return famfs_err_set(err, -E2BIG, "%zu files in one batch (at most %d)", n, FAMFS_BATCH_MAX);
	r = begin_write(fs, err);
	if (r < 0 || n == 0)
		return r;

	entries = calloc(n, sizeof(*entries));
	maps = calloc(n, sizeof(*maps));
	sorted = calloc(n, sizeof(*sorted));
	if (!entries || !maps || !sorted) {
		r = famfs_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	/* The whole batch is checked, then allocated, then checked as entries, before anything is written. */
	for (size_t k = 0; k < n; k++) {
		r = check_new_file(fs, &specs[k], err);
		if (r < 0) {
			name_element(err, specs, n, k, true);
			goto out;
		}
		sorted[k] = (struct batch_name){ specs[k].relpath, k };
	}
	qsort(sorted, n, sizeof(*sorted), cmp_batch_name);
	for (size_t k = 1; k < n; k++) {
		if (strcmp(sorted[k - 1].relpath, sorted[k].relpath) == 0) {
			r = famfs_err_set(err, -EEXIST, "the same path as element %zu (a path appears twice in the batch)",
					  sorted[k - 1].index);
			name_element(err, specs, n, sorted[k].index, false);
			goto out;
		}
	}
	if (n > famfs_log_free_slots(fs->log)) {
		r = famfs_err_set(err, -FAMFS_ELOGFULL, "log is full: %zu entries needed, %" PRIu64
				  " of %" PRIu64 " free", n, famfs_log_free_slots(fs->log),
				  fs->log->last_index + 1);
		goto out;
	}
	for (; allocated < n; allocated++) {
		const struct famfs_file_spec *s = &specs[allocated];

		r = famfs_alloc_file(&fs->alloc, s->size, s->interleave, &maps[allocated], err);
		if (r < 0) {
			name_element(err, specs, n, allocated, false);
			goto out;
		}
		r = famfs_entry_make_file(&entries[allocated], s->relpath, s->size, s->mode,
					  s->uid, s->gid, &maps[allocated], err);
		if (r < 0) {
			famfs_alloc_unmark_fmap(&fs->alloc, &maps[allocated]);
			name_element(err, specs, n, allocated, true);
			goto out;
		}
	}
	/* The allocator marked the space; the gate claims it again, then apply_entry. */
	for (size_t k = 0; k < n; k++)
		famfs_alloc_unmark_fmap(&fs->alloc, &maps[k]);
	allocated = 0;
	r = check_before_append(fs, entries, n, &bad, err);
	if (r < 0) {
		name_element(err, specs, n, bad, false);
		goto out;
	}

	r = append_own(fs, entries, n, ret_nodes, err);
	if (r == 0 && ret_maps)
		memcpy(ret_maps, maps, n * sizeof(*maps));
out:
	while (allocated > 0)
		famfs_alloc_unmark_fmap(&fs->alloc, &maps[--allocated]);
	famfs_fs_unlock(fs);
	free(entries);
	free(maps);
	free(sorted);
	return r;
}

int famfs_fs_mkdir(struct famfs_fs *fs, const char *relpath, uint32_t mode, uint32_t uid,
		   uint32_t gid, bool parents, uint32_t *ret_node, struct famfs_err *err)
{
	struct famfs_log_entry entries[FAMFS_MAX_PATHLEN / 2 + 1];
	char buf[FAMFS_MAX_PATHLEN];
	size_t len, n = 0, bad;
	uint32_t id, nodes[FAMFS_MAX_PATHLEN / 2 + 1];
	int r;

	if (famfs_path_check(relpath, err) != FAMFS_OK)
		return err ? err->code : -EINVAL;
	r = begin_write(fs, err);
	if (r < 0)
		return r;

	len = strlen(relpath);
	id = famfs_ns_lookup(fs->ns, relpath, len);
	if (id != FAMFS_NS_NONE) {
		if (!parents || famfs_ns_node(fs->ns, id)->kind != FAMFS_NS_DIR)
			r = famfs_err_set(err, -EEXIST, "\"%s\" already exists", relpath);
		else if (ret_node)
			*ret_node = id;
		goto out;
	}
	/* Log each missing level, top down. */
	for (size_t end = 1; end <= len; end++) {
		if (end < len && relpath[end] != '/')
			continue;
		memcpy(buf, relpath, end);
		buf[end] = '\0';
		id = famfs_ns_lookup(fs->ns, buf, end);
		if (id != FAMFS_NS_NONE) {
			if (famfs_ns_node(fs->ns, id)->kind != FAMFS_NS_DIR) {
				r = famfs_err_set(err, -ENOTDIR, "\"%s\" is a file", buf);
				goto out;
			}
			continue;
		}
		if (end < len && !parents) {
			r = famfs_err_set(err, -ENOENT, "parent directory \"%s\" of \"%s\" does not exist",
					  buf, relpath);
			goto out;
		}
		r = famfs_entry_make_mkdir(&entries[n++], buf, mode, uid, gid, err);
		if (r < 0)
			goto out;
	}
	r = check_before_append(fs, entries, n, &bad, err);
	if (r < 0) {
		famfs_err_prefix(err, "\"%s\"", famfs_entry_relpath(&entries[bad]));
		goto out;
	}
	r = append_own(fs, entries, n, nodes, err);
	if (r == 0 && ret_node)
		*ret_node = nodes[n - 1];
out:
	famfs_fs_unlock(fs);
	return r;
}

int famfs_fs_repair_tail(struct famfs_fs *fs, const struct famfs_check_repair *plan,
			 struct famfs_repair_action ret_actions[FAMFS_REPAIR_MAX_ACTIONS], size_t *ret_n,
			 struct famfs_err *err)
{
	int r;

	if (!fs->master)
		return famfs_err_set(err, -EPERM, "%s: this host is not the master of the file system", fs->dev->path);
	if (!fs->dev->writable)
		return famfs_err_set(err, -EROFS, "%s is open read-only", fs->dev->path);
	/* Every local writer appends under this lock; no other host appends to a master's log. */
	if (flock(fs->dev->fd, LOCK_EX | LOCK_NB) < 0)
		return famfs_err_set(err, errno == EWOULDBLOCK ? -EBUSY : -errno,
				     "cannot repair %s: its log is locked by another writer", fs->dev->path);
	r = famfs_repair_log_header(fs->log, plan, ret_actions, ret_n, err);
	if (r >= 0 && (void *)fs->log == (void *)(fs->dev->base + FAMFS_LOG_OFFSET) &&
	    fs->dev->kind != FAMFS_DEVICE_DAX)
		(void)msync(fs->dev->base + FAMFS_LOG_OFFSET, 4096, MS_SYNC);
	famfs_fs_unlock(fs);
	if (r < 0)
		famfs_err_prefix(err, "cannot repair %s", fs->dev->path);
	return r;
}
