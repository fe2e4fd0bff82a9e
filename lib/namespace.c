// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdlib.h>
#include <string.h>

#include "hugepages.h"
#include "namespace.h"

/*
 * Nodes live in a growing array; an open-addressing table of node ids,
 * keyed by a hash of the path, finds them.  Each slot keeps the hash with
 * the id, so a probe that is not a match costs no visit to the node.  Path
 * bytes live in an arena of fixed blocks so that node->path stays valid as
 * the tree grows.
 */
#define ARENA_BLOCK (256u * 1024u)

struct arena_block {
	struct arena_block *next;
	size_t used;
	size_t size;
	char data[];
};

struct slot {
	uint32_t hash;
	uint32_t ref;          /* node id + 1; 0: empty, so a fresh table is zeroed memory */
};

struct famfs_ns {
	struct famfs_ns_node *nodes;
	uint32_t nnodes;
	uint32_t cap;
	struct slot *table;
	uint32_t table_size;   /* a power of two */
	uint32_t last_parent;  /* the directory the last add went into: the next is likely the same */
	size_t nfiles;
	size_t ndirs;
	struct arena_block *arena;
};

static uint32_t hash_path(const char *p, size_t len)
{
	/* FNV-1a */
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= (uint8_t)p[i];
		h *= 16777619u;
	}
	return h;
}

static struct arena_block *arena_add_block(struct famfs_ns *ns, size_t size)
{
	struct arena_block *b = malloc(sizeof(*b) + size);

	if (!b)
		return NULL;
	b->next = ns->arena;
	b->used = 0;
	b->size = size;
	ns->arena = b;
	return b;
}

static char *arena_copy(struct famfs_ns *ns, const char *s, size_t len)
{
	struct arena_block *b = ns->arena;
	char *p;

	if (!b || b->used + len + 1 > b->size) {
		b = arena_add_block(ns, len + 1 > ARENA_BLOCK ? len + 1 : ARENA_BLOCK);
		if (!b)
			return NULL;
	}
	p = b->data + b->used;
	memcpy(p, s, len);
	p[len] = '\0';
	b->used += len + 1;
	return p;
}

/* Puts @s in the first free slot from its hash on (the table is never full). */
static void table_insert(struct slot *table, uint32_t size, struct slot s)
{
	uint32_t k = s.hash & (size - 1);

	while (table[k].ref)
		k = (k + 1) & (size - 1);
	table[k] = s;
}

static int table_resize(struct famfs_ns *ns, uint32_t size)
{
	struct slot *table = calloc(size, sizeof(*table));

	if (!table)
		return -ENOMEM;
	famfs_advise_hugepages(table, sizeof(*table) * size);
	for (uint32_t k = 0; k < ns->table_size; k++)
		if (ns->table[k].ref)
			table_insert(table, size, ns->table[k]);
	free(ns->table);
	ns->table = table;
	ns->table_size = size;
	return 0;
}

/* Room for @cap nodes in the node array. */
static int grow_nodes(struct famfs_ns *ns, uint32_t cap)
{
	struct famfs_ns_node *nodes;

	nodes = famfs_realloc_huge(ns->nodes, sizeof(*nodes) * ns->cap, sizeof(*nodes) * cap);
	if (!nodes)
		return -ENOMEM;
	ns->nodes = nodes;
	ns->cap = cap;
	return 0;
}

int famfs_ns_reserve(struct famfs_ns *ns, uint64_t n)
{
	uint64_t want, size;
	int r;

	want = (uint64_t)ns->nnodes + (n < FAMFS_NS_RESERVE_MAX ? n : FAMFS_NS_RESERVE_MAX);
	if (want >= UINT32_MAX - 1)
		return -ENOSPC;
	if (want > ns->cap) {
		r = grow_nodes(ns, want);
		if (r < 0)
			return r;
	}
	/* The table is kept at most half full. */
	for (size = ns->table_size ? ns->table_size : 128; want * 2 > size; size *= 2)
		;
	if (size > (1u << 31))
		return -ENOSPC;
	if (size > ns->table_size)
		return table_resize(ns, size);
	return 0;
}

int famfs_ns_reserve_names(struct famfs_ns *ns, size_t bytes)
{
	struct arena_block *b = ns->arena;

	if (b && b->size - b->used >= bytes)
		return 0;
	b = arena_add_block(ns, bytes > ARENA_BLOCK ? bytes : ARENA_BLOCK);
	if (!b)
		return -ENOMEM;
	famfs_advise_hugepages(b->data, b->size);
	return 0;
}

static int add_node(struct famfs_ns *ns, const char *path, size_t len, uint32_t hash,
		    uint32_t *ret_id)
{
	struct famfs_ns_node *n;
	uint32_t id;
	int r;

	if (ns->nnodes == UINT32_MAX - 1)
		return -ENOSPC;
	if (ns->nnodes == ns->cap) {
		r = grow_nodes(ns, ns->cap ? (ns->cap < UINT32_MAX / 2 ? ns->cap * 2 : UINT32_MAX - 1) : 64);
		if (r < 0)
			return r;
	}
	if ((uint64_t)(ns->nnodes + 1) * 2 > ns->table_size) {
		r = table_resize(ns, ns->table_size ? ns->table_size * 2 : 128);
		if (r < 0)
			return r;
	}
	id = ns->nnodes;
	n = &ns->nodes[id];
	memset(n, 0, sizeof(*n));
	n->path = arena_copy(ns, path, len);
	if (!n->path)
		return -ENOMEM;
	n->path_len = len;
	n->parent = n->first_child = n->last_child = n->next_sibling = FAMFS_NS_NONE;
	table_insert(ns->table, ns->table_size, (struct slot){ .hash = hash, .ref = id + 1 });
	ns->nnodes++;
	*ret_id = id;
	return 0;
}

int famfs_ns_new(struct famfs_ns **ret)
{
	struct famfs_ns *ns = calloc(1, sizeof(*ns));
	uint32_t root;
	int r;

	if (!ns)
		return -ENOMEM;
	r = add_node(ns, "", 0, hash_path("", 0), &root);
	if (r < 0) {
		famfs_ns_free(ns);
		return r;
	}
	ns->nodes[root].kind = FAMFS_NS_DIR;
	ns->nodes[root].mode = 0755;
	ns->nodes[root].index = -1;
	*ret = ns;
	return 0;
}

struct famfs_ns *famfs_ns_free(struct famfs_ns *ns)
{
	if (!ns)
		return NULL;
	while (ns->arena) {
		struct arena_block *next = ns->arena->next;

		free(ns->arena);
		ns->arena = next;
	}
	free(ns->nodes);
	free(ns->table);
	free(ns);
	return NULL;
}

static uint32_t lookup_hashed(const struct famfs_ns *ns, const char *path, size_t len, uint32_t hash)
{
	uint32_t slot = hash & (ns->table_size - 1);

	for (;;) {
		struct slot s = ns->table[slot];
		const struct famfs_ns_node *n;

		if (!s.ref)
			return FAMFS_NS_NONE;
		if (s.hash == hash) {
			n = &ns->nodes[s.ref - 1];
			if (n->path_len == len && memcmp(n->path, path, len) == 0)
				return s.ref - 1;
		}
		slot = (slot + 1) & (ns->table_size - 1);
	}
}

uint32_t famfs_ns_lookup(const struct famfs_ns *ns, const char *path, size_t len)
{
	return lookup_hashed(ns, path, len, hash_path(path, len));
}

void famfs_ns_name_init(struct famfs_ns_name *name, const char *path, size_t len)
{
	size_t plen = len;

	while (plen > 0 && path[plen - 1] != '/')
		plen--;
	name->path = path;
	name->len = len;
	name->name_off = plen;
	name->hash = hash_path(path, len);
}

void famfs_ns_prefetch(const struct famfs_ns *ns, const struct famfs_ns_name *name)
{
	__builtin_prefetch(&ns->table[name->hash & (ns->table_size - 1)]);
}

size_t famfs_ns_working_memory(const struct famfs_ns *ns, struct famfs_range ranges[FAMFS_NS_WORKING_RANGES])
{
	size_t n = 0;

	ranges[n++] = (struct famfs_range){ ns->table, sizeof(*ns->table) * ns->table_size };
	ranges[n++] = (struct famfs_range){ ns->nodes + ns->nnodes, sizeof(*ns->nodes) * (ns->cap - ns->nnodes) };
	if (ns->arena)
		ranges[n++] = (struct famfs_range){ ns->arena->data + ns->arena->used,
						    ns->arena->size - ns->arena->used };
	return n;
}

const struct famfs_ns_node *famfs_ns_node(const struct famfs_ns *ns, uint32_t id)
{
	return id < ns->nnodes ? &ns->nodes[id] : NULL;
}

int famfs_ns_add(struct famfs_ns *ns, const char *path, enum famfs_ns_kind kind,
		 uint32_t mode, uint32_t uid, uint32_t gid, uint64_t size, int64_t index,
		 uint32_t *ret_id)
{
	struct famfs_ns_name name;

	famfs_ns_name_init(&name, path, strlen(path));
	return famfs_ns_add_name(ns, &name, kind, mode, uid, gid, size, index, ret_id);
}

int famfs_ns_add_name(struct famfs_ns *ns, const struct famfs_ns_name *name, enum famfs_ns_kind kind,
		      uint32_t mode, uint32_t uid, uint32_t gid, uint64_t size, int64_t index,
		      uint32_t *ret_id)
{
	const char *path = name->path;
	size_t len = name->len, plen = name->name_off;
	uint32_t parent, id;
	struct famfs_ns_node *n, *p;
	int r;

	if (lookup_hashed(ns, path, len, name->hash) != FAMFS_NS_NONE)
		return -EEXIST;
	parent = ns->last_parent;
	if (ns->nodes[parent].path_len != (plen ? plen - 1 : 0) ||
	    memcmp(ns->nodes[parent].path, path, ns->nodes[parent].path_len) != 0)
		parent = famfs_ns_lookup(ns, path, plen ? plen - 1 : 0);
	if (parent == FAMFS_NS_NONE)
		return -ENOENT;
	ns->last_parent = parent;
	if (ns->nodes[parent].kind != FAMFS_NS_DIR)
		return -ENOTDIR;

	r = add_node(ns, path, len, name->hash, &id);
	if (r < 0)
		return r;
	n = &ns->nodes[id];
	n->name_off = plen;
	n->kind = kind;
	n->mode = mode;
	n->uid = uid;
	n->gid = gid;
	n->size = size;
	n->index = index;
	n->parent = parent;
	p = &ns->nodes[parent];
	if (p->last_child == FAMFS_NS_NONE)
		p->first_child = id;
	else
		ns->nodes[p->last_child].next_sibling = id;
	p->last_child = id;
	if (kind == FAMFS_NS_FILE)
		ns->nfiles++;
	else
		ns->ndirs++;
	if (ret_id)
		*ret_id = id;
	return 0;
}

size_t famfs_ns_count(const struct famfs_ns *ns, enum famfs_ns_kind kind)
{
	return kind == FAMFS_NS_FILE ? ns->nfiles : ns->ndirs;
}
