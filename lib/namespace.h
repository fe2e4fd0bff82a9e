/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The tree of names a log describes: directories and files by relative
 * path, each remembering the log entry that created it.  Files' maps are
 * not copied: the log is append-only, so the entry stays where it is.
 */
#ifndef FAMFS_NAMESPACE_H
#define FAMFS_NAMESPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "hugepages.h"

#define FAMFS_NS_NONE UINT32_MAX
#define FAMFS_NS_ROOT 0u

enum famfs_ns_kind {
	FAMFS_NS_DIR,
	FAMFS_NS_FILE,
};

struct famfs_ns_node {
	const char *path;        /* relative path, "" for the root */
	uint32_t path_len;
	uint32_t name_off;       /* where the last component starts */
	enum famfs_ns_kind kind;
	uint32_t mode;           /* permission bits */
	uint32_t uid;
	uint32_t gid;
	uint64_t size;           /* files */
	int64_t index;           /* log entry, -1 for the root */
	uint32_t parent;
	uint32_t first_child;
	uint32_t last_child;
	uint32_t next_sibling;
};

struct famfs_ns;

int famfs_ns_new(struct famfs_ns **ret);
struct famfs_ns *famfs_ns_free(struct famfs_ns *ns);

/*
 * Sets aside room for @n more nodes (arrays and hash table), at most
 * FAMFS_NS_RESERVE_MAX of them, so that adding them reallocates nothing.
 * Only an optimisation: adding grows as needed.
 */
#define FAMFS_NS_RESERVE_MAX (1u << 20)
int famfs_ns_reserve(struct famfs_ns *ns, uint64_t n);

/*
 * Sets aside @bytes for the copies of paths added from here on (each takes
 * its length plus one).  Only an optimisation, like famfs_ns_reserve.
 */
int famfs_ns_reserve_names(struct famfs_ns *ns, size_t bytes);

/*
 * The table, the node array's and the path room not yet used, for
 * famfs_prefault_start: they stay where they are as long as no more is
 * added than famfs_ns_reserve and famfs_ns_reserve_names made room for.
 * Returns the number of ranges.
 */
#define FAMFS_NS_WORKING_RANGES 3
size_t famfs_ns_working_memory(const struct famfs_ns *ns, struct famfs_range ranges[FAMFS_NS_WORKING_RANGES]);

/* Node id of @path (length @len, no trailing slash; "" is the root), or FAMFS_NS_NONE. */
uint32_t famfs_ns_lookup(const struct famfs_ns *ns, const char *path, size_t len);

/*
 * A path with what an add needs to know of it, worked out once: a checker
 * does this on the thread that read the entry, ahead of the add.
 */
struct famfs_ns_name {
	const char *path;    /* NUL-terminated; copied by the add */
	uint32_t len;
	uint32_t name_off;   /* where the last component starts */
	uint32_t hash;
};

void famfs_ns_name_init(struct famfs_ns_name *name, const char *path, size_t len);

/*
 * Starts loading @name's table slot into the cache: a walk that adds many
 * paths calls it a few entries ahead, so that the add finds the slot
 * there.  Only a hint.
 */
void famfs_ns_prefetch(const struct famfs_ns *ns, const struct famfs_ns_name *name);

const struct famfs_ns_node *famfs_ns_node(const struct famfs_ns *ns, uint32_t id);

/*
 * Adds @path, whose syntax the caller has checked.  -EEXIST when the path is
 * taken, -ENOENT when its parent does not exist, -ENOTDIR when the parent is
 * a file.  On success, *ret_id (if non-NULL) is the new node.
 */
int famfs_ns_add(struct famfs_ns *ns, const char *path, enum famfs_ns_kind kind,
		 uint32_t mode, uint32_t uid, uint32_t gid, uint64_t size, int64_t index,
		 uint32_t *ret_id);
/* The same, for a name from famfs_ns_name_init */
int famfs_ns_add_name(struct famfs_ns *ns, const struct famfs_ns_name *name, enum famfs_ns_kind kind,
		      uint32_t mode, uint32_t uid, uint32_t gid, uint64_t size, int64_t index,
		      uint32_t *ret_id);

size_t famfs_ns_count(const struct famfs_ns *ns, enum famfs_ns_kind kind);

#endif
