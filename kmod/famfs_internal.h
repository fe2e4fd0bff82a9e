/* SPDX-License-Identifier: GPL-2.0 */
/*
 * famfs_internal.h - shared definitions of the famfs kernel module
 */
#ifndef FAMFS_INTERNAL_H
#define FAMFS_INTERNAL_H

#include <linux/fs.h>
#include <linux/iomap.h>
#include <linux/atomic.h>
#include <linux/famfs_ioctl.h>

#include "famfs_compat.h"

#define FAMFS_STATFS_MAGIC	0x87b282fe
#define FAMFS_DEFAULT_MODE	0755
#define FAMFS_ALIGN		FAMFS_IOC_ALIGN	/* 2 MiB */

/* One mounted famfs instance */
struct famfs_fs_info {
	umode_t mode;			/* root directory mode (mode=) */
	char *devname;			/* the source given to mount */
	struct famfs_bdev bdev;		/* pmem block device, if that */
	struct file *dax_filp;		/* the open /dev/dax, if that */
	struct dax_device *dax_devp;
	u64 dax_part_off;		/* partition start in the dax device */
	u64 dev_size;			/* bytes; 0 if unknown */
	bool dax_error;			/* media failure reported */
	u64 dax_error_offset;		/* the first one, as the dax core said */
	u64 dax_error_len;
	struct super_block *sb;
};

/* A contiguous range of the backing device */
struct famfs_range {
	u64 offset;
	u64 len;
};

struct famfs_iext {
	u64 nstrips;
	u64 chunk_size;
	u64 nbytes;
	struct famfs_range strip[FAMFS_MAX_STRIPS];
};

/* The extent map of one file, set once by MAP_CREATE and never changed */
struct famfs_file_meta {
	bool error;			/* disabled: rogue size change */
	u32 file_type;			/* enum famfs_file_type */
	u32 ext_type;			/* enum famfs_ioc_ext_type */
	u64 file_size;
	u32 count;			/* number of se[] or ie[] */
	union {
		struct famfs_range *se;
		struct famfs_iext *ie;
	};
};

static inline struct famfs_fs_info *FAMFS_SB(struct super_block *sb)
{
	return sb->s_fs_info;
}

/*
 * i_private goes from NULL to a complete map once (MAP_CREATE publishes it
 * with smp_store_release()); the acquire pairs with that, so whoever sees
 * the pointer also sees the extents it points to.
 */
static inline struct famfs_file_meta *famfs_meta(struct inode *inode)
{
	/* pairs with the smp_store_release() in MAP_CREATE */
	return smp_load_acquire((struct famfs_file_meta **)&inode->i_private);
}

/* famfs_file.c */
extern const struct file_operations famfs_file_operations;
extern const struct inode_operations famfs_file_inode_operations;
extern const struct address_space_operations famfs_dax_aops;
void famfs_meta_free(struct famfs_file_meta *meta);
struct famfs_file_meta *
famfs_meta_from_user(const struct famfs_ioc_fmap __user *arg);
int famfs_meta_validate(struct famfs_fs_info *fsi,
			const struct famfs_file_meta *meta);
int famfs_install_meta(struct inode *inode, struct famfs_file_meta *meta);
void famfs_give_meta(struct inode *inode, struct famfs_file_meta *meta);

/* famfs_inode.c */
int famfs_create_mapped(famfs_idmap_t idmap, struct dentry *parent,
			struct qstr *name, umode_t mode, kuid_t uid, kgid_t gid,
			struct famfs_file_meta *meta);

/* famfs_dir.c */
extern const struct file_operations famfs_dir_operations;

/* famfs_inode.c: fault counters */
enum famfs_fault_kind {
	FAMFS_PTE_FAULT,
	FAMFS_PMD_FAULT,
	FAMFS_PUD_FAULT,
	FAMFS_NR_FAULT_KINDS,
};

void famfs_count_fault(enum famfs_fault_kind kind);

#endif /* FAMFS_INTERNAL_H */
