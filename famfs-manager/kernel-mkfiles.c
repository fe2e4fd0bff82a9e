// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A batch of files for famfs.ko's MKFILES ioctl: siblings in one directory,
 * each with its name, mode, owner and map, created in one system call
 * instead of open(O_CREAT) + fchown + fchmod + MAP_CREATE_V2 + close each.
 * The module of this tree has it; upstream's answers ENOTTY, and the
 * caller then falls back to one file at a time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kernel.h"

struct kernel_mkfiles {
	uint32_t n;
	uint32_t parent;
	void *tag[KERNEL_MKFILES_MAX];
	const struct kernel_fmap *map[KERNEL_MKFILES_MAX];
	struct famfs_ioc_mkfile req[KERNEL_MKFILES_MAX];
};

struct kernel_mkfiles *kernel_mkfiles_new(void)
{
	return calloc(1, sizeof(struct kernel_mkfiles));
}

void kernel_mkfiles_free(struct kernel_mkfiles *b)
{
	free(b);
}

uint32_t kernel_mkfiles_count(const struct kernel_mkfiles *b)
{
	return b->n;
}

uint32_t kernel_mkfiles_parent(const struct kernel_mkfiles *b)
{
	return b->parent;
}

bool kernel_mkfiles_add(struct kernel_mkfiles *b, uint32_t parent, void *tag, const char *name,
			uint32_t mode, uint32_t uid, uint32_t gid, const struct kernel_fmap *map)
{
	struct famfs_ioc_mkfile *r;
	uint32_t i = b->n;

	if (i == KERNEL_MKFILES_MAX || (i && parent != b->parent))
		return false;
	b->parent = parent;
	b->tag[i] = tag;
	b->map[i] = map;
	r = &b->req[i];
	memset(r, 0, sizeof(*r));
	r->name = (uintptr_t)name;
	r->name_len = (uint32_t)strlen(name);
	r->mode = mode & 07777;
	r->uid = uid;
	r->gid = gid;
	r->fmap = (uintptr_t)&map->fmap;
	r->result = -EINPROGRESS;
	b->n++;
	return true;
}

int kernel_mkfiles_submit(struct kernel_mkfiles *b, int dirfd)
{
	struct famfs_ioc_mkfiles arg = {
		.files = (uintptr_t)b->req,
		.count = b->n,
	};

	if (b->n == 0)
		return 0;
	return ioctl(dirfd, FAMFSIOC_MKFILES, &arg) < 0 ? -errno : 0;
}

int kernel_mkfiles_result(const struct kernel_mkfiles *b, uint32_t i, void **tag,
			  const struct kernel_fmap **map)
{
	*tag = b->tag[i];
	*map = b->map[i];
	return b->req[i].result;
}

void kernel_mkfiles_clear(struct kernel_mkfiles *b)
{
	b->n = 0;
}
