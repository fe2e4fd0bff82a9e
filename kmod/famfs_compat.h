/* SPDX-License-Identifier: GPL-2.0 */
/*
 * famfs_compat.h - every kernel API difference famfs cares about, in one place
 *
 * The module is written against the newest interface where that is simple,
 * and this header maps it onto older kernels by LINUX_VERSION_CODE.
 * Debian 12's 6.1 and 6.12 are build- and run-tested in this tree; the
 * branches for later kernels follow the upstream API changes listed next
 * to each one.
 */
#ifndef FAMFS_COMPAT_H
#define FAMFS_COMPAT_H

#include <linux/version.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/blkdev.h>
#include <linux/dax.h>
#include <linux/namei.h>
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 17, 0)
#include <linux/pfn_t.h>
#endif

/* 6.3: inode operations take a struct mnt_idmap instead of a user_namespace */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
typedef struct user_namespace *famfs_idmap_t;
#define FAMFS_NOP_IDMAP (&init_user_ns)
#else
typedef struct mnt_idmap *famfs_idmap_t;
#define FAMFS_NOP_IDMAP (&nop_mnt_idmap)
#endif

/* 6.3: the mount's idmap instead of its user namespace */
static inline famfs_idmap_t famfs_file_idmap(struct file *file)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
	return file_mnt_user_ns(file);
#else
	return file_mnt_idmap(file);
#endif
}

/* 6.3: vm_flags became read-only outside of the vm_flags_*() helpers */
static inline void famfs_vma_set_flags(struct vm_area_struct *vma,
				       unsigned long flags)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
	vma->vm_flags |= flags;
#else
	vm_flags_set(vma, flags);
#endif
}

/* 6.6: ctime accessors; 6.7: atime/mtime accessors, simple_inode_init_ts() */
static inline void famfs_inode_init_times(struct inode *inode)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 6, 0)
	inode->i_atime = inode->i_mtime = inode->i_ctime = current_time(inode);
#elif LINUX_VERSION_CODE < KERNEL_VERSION(6, 7, 0)
	inode->i_atime = inode->i_mtime = inode_set_ctime_current(inode);
#else
	simple_inode_init_ts(inode);
#endif
}

static inline void famfs_dir_touch(struct inode *dir)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 6, 0)
	dir->i_mtime = dir->i_ctime = current_time(dir);
#elif LINUX_VERSION_CODE < KERNEL_VERSION(6, 7, 0)
	dir->i_mtime = inode_set_ctime_current(dir);
#else
	inode_set_mtime_to_ts(dir, inode_set_ctime_current(dir));
#endif
}

/* 6.15: ->mkdir returns a dentry (NULL: the one passed in was used) */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 15, 0)
typedef int famfs_mkdir_ret_t;
#define FAMFS_MKDIR_RET(err) (err)
#else
typedef struct dentry *famfs_mkdir_ret_t;
#define FAMFS_MKDIR_RET(err) ((err) ? ERR_PTR(err) : NULL)
#endif

/*
 * 6.6: the huge_fault size argument became a page order.
 * 6.17: pfn_t is gone; DAX hands out plain pfns.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 6, 0)
typedef enum page_entry_size famfs_fault_size_t;
#define FAMFS_FAULT_PTE PE_SIZE_PTE
#define FAMFS_FAULT_PMD PE_SIZE_PMD
#define FAMFS_FAULT_PUD PE_SIZE_PUD
#else
#ifndef PMD_ORDER
#define PMD_ORDER (PMD_SHIFT - PAGE_SHIFT)
#endif
#ifndef PUD_ORDER
#define PUD_ORDER (PUD_SHIFT - PAGE_SHIFT)
#endif
typedef unsigned int famfs_fault_size_t;
#define FAMFS_FAULT_PTE 0
#define FAMFS_FAULT_PMD PMD_ORDER
#define FAMFS_FAULT_PUD PUD_ORDER
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 17, 0)
typedef pfn_t famfs_pfn_t;
#else
typedef unsigned long famfs_pfn_t;
#endif

/* 6.5: generic_file_splice_read() is gone; copy_splice_read() uses read_iter */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
#define famfs_splice_read generic_file_splice_read
#else
#define famfs_splice_read copy_splice_read
#endif

/*
 * Opening the backing pmem block device exclusively.
 *   < 6.5: blkdev_get_by_path(path, FMODE_*|FMODE_EXCL, holder), blkdev_put
 *   6.5:   blk_mode_t and holder operations; blkdev_put(bdev, holder)
 *   6.7:   bdev_open_by_path() returns a struct bdev_handle
 *   6.9:   bdev_file_open_by_path() returns a struct file
 */
struct famfs_bdev {
	struct block_device *bdev;
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 9, 0)
	struct file *file;
#elif LINUX_VERSION_CODE >= KERNEL_VERSION(6, 7, 0)
	struct bdev_handle *handle;
#endif
	void *holder;
};

static inline int famfs_bdev_open(struct famfs_bdev *fb, const char *path,
				  void *holder)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
	struct block_device *bdev;

	bdev = blkdev_get_by_path(path, FMODE_READ | FMODE_WRITE | FMODE_EXCL,
				  holder);
	if (IS_ERR(bdev))
		return PTR_ERR(bdev);
	fb->bdev = bdev;
#elif LINUX_VERSION_CODE < KERNEL_VERSION(6, 7, 0)
	struct block_device *bdev;

	bdev = blkdev_get_by_path(path, BLK_OPEN_READ | BLK_OPEN_WRITE,
				  holder, NULL);
	if (IS_ERR(bdev))
		return PTR_ERR(bdev);
	fb->bdev = bdev;
#elif LINUX_VERSION_CODE < KERNEL_VERSION(6, 9, 0)
	struct bdev_handle *h;

	h = bdev_open_by_path(path, BLK_OPEN_READ | BLK_OPEN_WRITE, holder,
			      NULL);
	if (IS_ERR(h))
		return PTR_ERR(h);
	fb->handle = h;
	fb->bdev = h->bdev;
#else
	struct file *f;

	f = bdev_file_open_by_path(path, BLK_OPEN_READ | BLK_OPEN_WRITE,
				   holder, NULL);
	if (IS_ERR(f))
		return PTR_ERR(f);
	fb->file = f;
	fb->bdev = file_bdev(f);
#endif
	fb->holder = holder;
	return 0;
}

static inline void famfs_bdev_close(struct famfs_bdev *fb)
{
	if (!fb->bdev)
		return;
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 5, 0)
	blkdev_put(fb->bdev, FMODE_READ | FMODE_WRITE | FMODE_EXCL);
#elif LINUX_VERSION_CODE < KERNEL_VERSION(6, 7, 0)
	blkdev_put(fb->bdev, fb->holder);
#elif LINUX_VERSION_CODE < KERNEL_VERSION(6, 9, 0)
	bdev_release(fb->handle);
	fb->handle = NULL;
#else
	fput(fb->file);
	fb->file = NULL;
#endif
	fb->bdev = NULL;
}

#endif /* FAMFS_COMPAT_H */
