// SPDX-License-Identifier: GPL-2.0
/*
 * famfs - files in shared (fabric-attached) memory
 *
 * This file: the per-file extent map (handed over once with a MAP_CREATE
 * ioctl, then immutable), resolving file offsets to device offsets, and the
 * read/write/mmap/fault paths, which go straight to the DAX device.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/dax.h>
#include <linux/iomap.h>
#include <linux/uio.h>
#include <linux/slab.h>
#include <linux/math64.h>
#include <linux/huge_mm.h>
#include <linux/pagemap.h>
#include <linux/uaccess.h>
#include <linux/capability.h>

#include "famfs_internal.h"

/* ---- extent maps ------------------------------------------------------- */

/*
 * A map and its @count extents in one allocation, se[] or ie[] in its tail:
 * a replay makes tens of thousands of maps, and each allocation costs.
 */
static struct famfs_file_meta *famfs_meta_alloc(u32 ext_type, u32 count)
{
	size_t each = ext_type == FAMFS_IOC_EXT_INTERLEAVE ?
		      sizeof(struct famfs_iext) : sizeof(struct famfs_range);
	struct famfs_file_meta *meta;

	meta = kzalloc(sizeof(*meta) + count * each, GFP_KERNEL);
	if (!meta)
		return NULL;
	meta->ext_type = ext_type;
	meta->count = count;
	if (ext_type == FAMFS_IOC_EXT_INTERLEAVE)
		meta->ie = (struct famfs_iext *)(meta + 1);
	else
		meta->se = (struct famfs_range *)(meta + 1);
	return meta;
}

void famfs_meta_free(struct famfs_file_meta *meta)
{
	kfree(meta);
}

/* One device range: aligned start, inside the device, not at 0 unless sb */
static int famfs_check_range(struct famfs_fs_info *fsi,
			     const struct famfs_file_meta *meta,
			     const struct famfs_range *r)
{
	u64 end;

	if (!r->len || !IS_ALIGNED(r->offset, FAMFS_ALIGN))
		return -EINVAL;
	if (r->offset == 0 && meta->file_type != FAMFS_SUPERBLOCK)
		return -EINVAL;
	if (check_add_overflow(r->offset, r->len, &end))
		return -EINVAL;
	if (fsi->dev_size && end > fsi->dev_size)
		return -EINVAL;
	return 0;
}

int famfs_meta_validate(struct famfs_fs_info *fsi,
			const struct famfs_file_meta *meta)
{
	u64 capacity = 0;
	u32 i, j;
	int rc;

	switch (meta->file_type) {
	case FAMFS_REG:
	case FAMFS_SUPERBLOCK:
	case FAMFS_LOG:
		break;
	default:
		return -EINVAL;
	}
	if (meta->file_size > MAX_LFS_FILESIZE)
		return -EINVAL;

	if (meta->ext_type == FAMFS_IOC_EXT_SIMPLE) {
		for (i = 0; i < meta->count; i++) {
			const struct famfs_range *se = &meta->se[i];

			rc = famfs_check_range(fsi, meta, se);
			if (rc)
				return rc;
			/*
			 * Only the last extent may end off a 2 MiB boundary,
			 * and even it must end on a page: DAX faults map whole
			 * pages.
			 */
			if (i + 1 < meta->count &&
			    !IS_ALIGNED(se->len, FAMFS_ALIGN))
				return -EINVAL;
			if (!PAGE_ALIGNED(se->len))
				return -EINVAL;
			if (check_add_overflow(capacity, se->len, &capacity))
				return -EINVAL;
		}
	} else {
		/* the metadata files are always one simple extent */
		if (meta->file_type != FAMFS_REG)
			return -EINVAL;

		for (i = 0; i < meta->count; i++) {
			const struct famfs_iext *ie = &meta->ie[i];
			u64 min_len = U64_MAX, room;

			if (!ie->chunk_size ||
			    !IS_ALIGNED(ie->chunk_size, FAMFS_ALIGN))
				return -EINVAL;
			if (!ie->nbytes)
				return -EINVAL;
			if (i + 1 < meta->count &&
			    !IS_ALIGNED(ie->nbytes, FAMFS_ALIGN))
				return -EINVAL;
			for (j = 0; j < ie->nstrips; j++) {
				const struct famfs_range *st = &ie->strip[j];

				rc = famfs_check_range(fsi, meta, st);
				if (rc)
					return rc;
				if (st->len % ie->chunk_size)
					return -EINVAL;
				min_len = min(min_len, st->len);
			}
			/* round-robin over the strips: the shortest limits */
			if (check_mul_overflow(min_len, ie->nstrips, &room) ||
			    ie->nbytes > room)
				return -EINVAL;
			if (check_add_overflow(capacity, ie->nbytes, &capacity))
				return -EINVAL;
		}
	}

	if (meta->file_size > capacity)
		return -EINVAL;
	return 0;
}

/*
 * Resolve a file offset to a device offset and the number of bytes that are
 * contiguous on the device from there.
 */
static int famfs_resolve(const struct famfs_file_meta *meta, u64 pos,
			 u64 *dev_off, u64 *avail)
{
	u64 base = 0;
	u32 i;

	if (meta->ext_type == FAMFS_IOC_EXT_SIMPLE) {
		for (i = 0; i < meta->count; i++) {
			const struct famfs_range *se = &meta->se[i];

			if (pos < base + se->len) {
				*dev_off = se->offset + (pos - base);
				*avail = se->len - (pos - base);
				return 0;
			}
			base += se->len;
		}
		return -EIO;
	}

	for (i = 0; i < meta->count; i++) {
		const struct famfs_iext *ie = &meta->ie[i];
		u64 rel, chunk, in_chunk, stripe, strip_off;
		u32 strip;

		if (pos >= base + ie->nbytes) {
			base += ie->nbytes;
			continue;
		}
		rel = pos - base;
		chunk = div64_u64_rem(rel, ie->chunk_size, &in_chunk);
		stripe = div64_u64(chunk, ie->nstrips);
		strip = chunk - stripe * ie->nstrips;
		strip_off = stripe * ie->chunk_size + in_chunk;
		if (strip_off >= ie->strip[strip].len)
			return -EIO;	/* validated away; be safe */

		/*
		 * Contiguous up to the end of the chunk (strips hold whole
		 * chunks), but not into the next interleaved extent.  The last
		 * one may end mid-page; its page still lies in this chunk.
		 */
		*dev_off = ie->strip[strip].offset + strip_off;
		*avail = min(ie->chunk_size - in_chunk,
			     round_up(ie->nbytes, PAGE_SIZE) - rel);
		return 0;
	}
	return -EIO;
}

static int famfs_iomap_begin(struct inode *inode, loff_t pos, loff_t length,
			     unsigned int flags, struct iomap *iomap,
			     struct iomap *srcmap)
{
	struct famfs_fs_info *fsi = FAMFS_SB(inode->i_sb);
	struct famfs_file_meta *meta = famfs_meta(inode);
	u64 dev_off, avail;
	int rc;

	if (!meta)
		return -EIO;

	rc = famfs_resolve(meta, pos, &dev_off, &avail);
	if (rc) {
		pr_err_ratelimited("inode %lu: offset %lld is outside its extents\n",
				   inode->i_ino, pos);
		return rc;
	}

	iomap->offset = pos;
	iomap->length = min_t(u64, avail, length);
	iomap->addr = fsi->dax_part_off + dev_off;
	iomap->type = IOMAP_MAPPED;
	iomap->flags = 0;
	iomap->bdev = fsi->bdev.bdev;
	iomap->dax_dev = fsi->dax_devp;
	return 0;
}

static const struct iomap_ops famfs_iomap_ops = {
	.iomap_begin	= famfs_iomap_begin,
};

/*
 * Is this file usable?  Not if it was never mapped, not if its size was
 * changed behind famfs's back (a rogue truncate: the file is then disabled
 * for good), not if the device reported a media failure.
 */
static int famfs_file_check(struct inode *inode)
{
	struct famfs_fs_info *fsi = FAMFS_SB(inode->i_sb);
	struct famfs_file_meta *meta = famfs_meta(inode);

	if (READ_ONCE(fsi->dax_error))
		return -EIO;
	if (!meta || READ_ONCE(meta->error))
		return -ENXIO;
	if (i_size_read(inode) != meta->file_size) {
		WRITE_ONCE(meta->error, true);
		pr_warn_ratelimited("inode %lu: size changed from %llu to %lld outside famfs; file disabled\n",
				    inode->i_ino, meta->file_size,
				    i_size_read(inode));
		return -ENXIO;
	}
	if (!IS_DAX(inode))
		return -ENXIO;
	return 0;
}

/* ---- read, write, mmap -------------------------------------------------- */

static ssize_t famfs_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	ssize_t ret;

	if (!iov_iter_count(to))
		return 0;

	inode_lock_shared(inode);
	ret = famfs_file_check(inode);
	/* dax_iomap_rw() would still ask iomap_begin for the offset at EOF */
	if (!ret && iocb->ki_pos < i_size_read(inode))
		ret = dax_iomap_rw(iocb, to, &famfs_iomap_ops);
	inode_unlock_shared(inode);

	file_accessed(iocb->ki_filp);
	return ret;
}

/* Files never grow: a write is cut at EOF, and one at EOF writes nothing */
static ssize_t famfs_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct inode *inode = file_inode(iocb->ki_filp);
	loff_t size;
	ssize_t ret;

	inode_lock(inode);
	ret = famfs_file_check(inode);
	if (ret)
		goto out;

	ret = generic_write_checks(iocb, from);
	if (ret <= 0)
		goto out;

	size = i_size_read(inode);
	if (iocb->ki_pos >= size) {
		ret = 0;
		goto out;
	}
	iov_iter_truncate(from, size - iocb->ki_pos);

	ret = dax_iomap_rw(iocb, from, &famfs_iomap_ops);
out:
	inode_unlock(inode);
	return ret;
}

static vm_fault_t famfs_fault(struct vm_fault *vmf, famfs_fault_size_t size,
			      enum famfs_fault_kind kind)
{
	struct inode *inode = file_inode(vmf->vma->vm_file);
	bool write = (vmf->flags & FAULT_FLAG_WRITE) &&
		     (vmf->vma->vm_flags & VM_SHARED);
	famfs_pfn_t pfn;
	vm_fault_t ret;

	if (famfs_file_check(inode))
		return VM_FAULT_SIGBUS;

	if (write) {
		sb_start_pagefault(inode->i_sb);
		file_update_time(vmf->vma->vm_file);
	}
	filemap_invalidate_lock_shared(inode->i_mapping);
	/* again under the lock: famfs_drop_dax_mappings may have run */
	if (READ_ONCE(FAMFS_SB(inode->i_sb)->dax_error))
		ret = VM_FAULT_SIGBUS;
	else
		ret = dax_iomap_fault(vmf, size, &pfn, NULL, &famfs_iomap_ops);
	if (ret & VM_FAULT_NEEDDSYNC)
		ret = dax_finish_sync_fault(vmf, size, pfn);
	filemap_invalidate_unlock_shared(inode->i_mapping);
	if (write)
		sb_end_pagefault(inode->i_sb);

	/* Count faults served at this size, not attempts that fell back */
	if (!(ret & VM_FAULT_FALLBACK))
		famfs_count_fault(kind);
	return ret;
}

static vm_fault_t famfs_filemap_fault(struct vm_fault *vmf)
{
	return famfs_fault(vmf, FAMFS_FAULT_PTE, FAMFS_PTE_FAULT);
}

static vm_fault_t famfs_huge_fault(struct vm_fault *vmf,
				   famfs_fault_size_t size)
{
	enum famfs_fault_kind kind = FAMFS_PTE_FAULT;

	if (size == FAMFS_FAULT_PMD)
		kind = FAMFS_PMD_FAULT;
	else if (size == FAMFS_FAULT_PUD)
		kind = FAMFS_PUD_FAULT;
	return famfs_fault(vmf, size, kind);
}

static vm_fault_t famfs_mkwrite(struct vm_fault *vmf)
{
	return famfs_fault(vmf, FAMFS_FAULT_PTE, FAMFS_PTE_FAULT);
}

static const struct vm_operations_struct famfs_vm_ops = {
	.fault		= famfs_filemap_fault,
	.huge_fault	= famfs_huge_fault,
	.page_mkwrite	= famfs_mkwrite,
	.pfn_mkwrite	= famfs_mkwrite,
};

static int famfs_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct inode *inode = file_inode(file);
	int rc;

	rc = famfs_file_check(inode);
	if (rc)
		return rc;

	file_accessed(file);
	vma->vm_ops = &famfs_vm_ops;
	famfs_vma_set_flags(vma, VM_HUGEPAGE);
	return 0;
}

/* ---- ioctls ------------------------------------------------------------- */

/* Size, DAX and the map: the inode is locked, or not yet visible */
void famfs_give_meta(struct inode *inode, struct famfs_file_meta *meta)
{
	i_size_write(inode, meta->file_size);
	inode->i_flags |= S_DAX;
	/* publish the finished map; pairs with famfs_meta() */
	smp_store_release((struct famfs_file_meta **)&inode->i_private, meta);
}

int famfs_install_meta(struct inode *inode, struct famfs_file_meta *meta)
{
	int rc = 0;

	inode_lock(inode);
	if (inode->i_private)
		rc = -EEXIST;
	else
		famfs_give_meta(inode, meta);
	inode_unlock(inode);
	return rc;
}

/* Validate, then hand the map to the inode; frees meta on failure */
static long famfs_finish_create(struct file *file,
				struct famfs_file_meta *meta)
{
	struct inode *inode = file_inode(file);
	int rc;

	rc = famfs_meta_validate(FAMFS_SB(inode->i_sb), meta);
	if (!rc)
		rc = famfs_install_meta(inode, meta);
	if (rc)
		famfs_meta_free(meta);
	return rc;
}

static int famfs_create_allowed(struct file *file)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (famfs_meta(file_inode(file)))
		return -EEXIST;
	return 0;
}

static long famfs_ioc_map_create(struct file *file, void __user *arg)
{
	struct famfs_file_meta *meta;
	struct famfs_ioc_map imap;
	u64 i;
	int rc;

	rc = famfs_create_allowed(file);
	if (rc)
		return rc;
	if (copy_from_user(&imap, arg, sizeof(imap)))
		return -EFAULT;

	if (imap.extent_type != SIMPLE_DAX_EXTENT)
		return -EINVAL;
	if (imap.ext_list_count < 1)
		return -ENOSPC;
	if (imap.ext_list_count > FAMFS_MAX_EXTENTS)
		return -E2BIG;

	meta = famfs_meta_alloc(FAMFS_IOC_EXT_SIMPLE, imap.ext_list_count);
	if (!meta)
		return -ENOMEM;
	meta->file_type = imap.file_type;
	meta->file_size = imap.file_size;
	for (i = 0; i < imap.ext_list_count; i++) {
		meta->se[i].offset = imap.ext_list[i].offset;
		meta->se[i].len = imap.ext_list[i].len;
	}
	return famfs_finish_create(file, meta);
}

static int famfs_copy_simple(struct famfs_range *dst,
			     const struct famfs_ioc_simple_extent __user *src,
			     u32 n)
{
	struct famfs_ioc_simple_extent se;
	u32 i;

	for (i = 0; i < n; i++) {
		if (copy_from_user(&se, &src[i], sizeof(se)))
			return -EFAULT;
		if (se.devindex != 0)
			return -EINVAL;
		dst[i].offset = se.offset;
		dst[i].len = se.len;
	}
	return 0;
}

/*
 * Copies a MAP_CREATE_V2 map (and the extents it points to) in from user
 * space.  The result is not validated yet: famfs_meta_validate() does that.
 */
struct famfs_file_meta *
famfs_meta_from_user(const struct famfs_ioc_fmap __user *arg)
{
	struct famfs_file_meta *meta;
	struct famfs_ioc_fmap fmap;
	u32 i, count, max;
	int rc;

	if (copy_from_user(&fmap, arg, sizeof(fmap)))
		return ERR_PTR(-EFAULT);

	switch (fmap.fioc_ext_type) {
	case FAMFS_IOC_EXT_SIMPLE:
		count = fmap.fioc_nextents;
		max = FAMFS_IOC_MAX_SIMPLE_EXTENTS;
		break;
	case FAMFS_IOC_EXT_INTERLEAVE:
		count = fmap.fioc_niext;
		max = FAMFS_IOC_MAX_INTERLEAVED_EXTENTS;
		break;
	default:
		return ERR_PTR(-EINVAL);
	}
	if (count < 1)
		return ERR_PTR(-ENOSPC);
	if (count > max)
		return ERR_PTR(-E2BIG);

	meta = famfs_meta_alloc(fmap.fioc_ext_type, count);
	if (!meta)
		return ERR_PTR(-ENOMEM);
	meta->file_type = fmap.fioc_file_type;
	meta->file_size = fmap.fioc_file_size;

	if (fmap.fioc_ext_type == FAMFS_IOC_EXT_SIMPLE) {
		rc = famfs_copy_simple(meta->se, fmap.kse, count);
		if (rc)
			goto err;
		return meta;
	}
	for (i = 0; i < count; i++) {
		struct famfs_ioc_interleaved_ext ie;

		rc = -EFAULT;
		if (copy_from_user(&ie, &fmap.kie[i], sizeof(ie)))
			goto err;
		rc = -EINVAL;
		if (ie.ie_nstrips < 1)
			goto err;
		rc = -E2BIG;
		if (ie.ie_nstrips > FAMFS_MAX_STRIPS)
			goto err;
		meta->ie[i].nstrips = ie.ie_nstrips;
		meta->ie[i].chunk_size = ie.ie_chunk_size;
		meta->ie[i].nbytes = ie.ie_nbytes;
		rc = famfs_copy_simple(meta->ie[i].strip, ie.ie_strips,
				       ie.ie_nstrips);
		if (rc)
			goto err;
	}
	return meta;

err:
	famfs_meta_free(meta);
	return ERR_PTR(rc);
}

static long famfs_ioc_map_create_v2(struct file *file, void __user *arg)
{
	struct famfs_file_meta *meta;
	int rc;

	rc = famfs_create_allowed(file);
	if (rc)
		return rc;
	meta = famfs_meta_from_user(arg);
	if (IS_ERR(meta))
		return PTR_ERR(meta);
	return famfs_finish_create(file, meta);
}

static long famfs_ioc_map_get(struct file *file, void __user *arg)
{
	struct famfs_file_meta *meta = famfs_meta(file_inode(file));
	struct famfs_ioc_map imap;
	u32 i;

	if (!meta)
		return -ENODATA;
	if (meta->ext_type != FAMFS_IOC_EXT_SIMPLE)
		return -EINVAL;
	if (meta->count > FAMFS_MAX_EXTENTS)
		return -E2BIG;

	memset(&imap, 0, sizeof(imap));
	imap.extent_type = SIMPLE_DAX_EXTENT;
	imap.file_type = meta->file_type;
	imap.file_size = meta->file_size;
	imap.ext_list_count = meta->count;
	for (i = 0; i < meta->count; i++) {
		imap.ext_list[i].offset = meta->se[i].offset;
		imap.ext_list[i].len = meta->se[i].len;
	}
	if (copy_to_user(arg, &imap, sizeof(imap)))
		return -EFAULT;
	return 0;
}

static long famfs_ioc_map_getext(struct file *file, void __user *arg)
{
	struct famfs_file_meta *meta = famfs_meta(file_inode(file));
	struct famfs_extent __user *out = arg;
	struct famfs_extent ext;
	u32 i;

	if (!meta)
		return -ENODATA;
	if (meta->ext_type != FAMFS_IOC_EXT_SIMPLE)
		return -EINVAL;

	for (i = 0; i < meta->count; i++) {
		ext.offset = meta->se[i].offset;
		ext.len = meta->se[i].len;
		if (copy_to_user(&out[i], &ext, sizeof(ext)))
			return -EFAULT;
	}
	return 0;
}

static long famfs_ioc_map_get_v2(struct file *file, void __user *arg)
{
	struct famfs_file_meta *meta = famfs_meta(file_inode(file));
	struct famfs_ioc_get_fmap *out;
	long rc = 0;
	u32 i;

	if (!meta)
		return -ENODATA;

	out = kzalloc(sizeof(*out), GFP_KERNEL);
	if (!out)
		return -ENOMEM;

	out->iocmap.fioc_file_size = meta->file_size;
	out->iocmap.fioc_file_type = meta->file_type;
	out->iocmap.fioc_ext_type = meta->ext_type;

	if (meta->ext_type == FAMFS_IOC_EXT_SIMPLE) {
		if (meta->count > FAMFS_MAX_EXTENTS) {
			rc = -E2BIG;
			goto out;
		}
		out->iocmap.fioc_nextents = meta->count;
		for (i = 0; i < meta->count; i++) {
			out->ikse[i].offset = meta->se[i].offset;
			out->ikse[i].len = meta->se[i].len;
		}
	} else {
		const struct famfs_iext *ie = &meta->ie[0];

		if (meta->count > 1) {
			rc = -E2BIG;
			goto out;
		}
		out->iocmap.fioc_niext = 1;
		out->ks.ikie.ie_nstrips = ie->nstrips;
		out->ks.ikie.ie_chunk_size = ie->chunk_size;
		out->ks.ikie.ie_nbytes = ie->nbytes;
		for (i = 0; i < ie->nstrips; i++) {
			out->ks.kie_strips[i].offset = ie->strip[i].offset;
			out->ks.kie_strips[i].len = ie->strip[i].len;
		}
	}
	if (copy_to_user(arg, out, sizeof(*out)))
		rc = -EFAULT;
out:
	kfree(out);
	return rc;
}

static long famfs_file_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case FAMFSIOC_NOP:
		return 0;
	case FAMFSIOC_MAP_CREATE:
		return famfs_ioc_map_create(file, uarg);
	case FAMFSIOC_MAP_GET:
		return famfs_ioc_map_get(file, uarg);
	case FAMFSIOC_MAP_GETEXT:
		return famfs_ioc_map_getext(file, uarg);
	case FAMFSIOC_MAP_CREATE_V2:
		return famfs_ioc_map_create_v2(file, uarg);
	case FAMFSIOC_MAP_GET_V2:
		return famfs_ioc_map_get_v2(file, uarg);
	default:
		return -ENOTTY;
	}
}

/* ---- tables ------------------------------------------------------------- */

/*
 * A rogue truncate is allowed to happen (user space may not know better),
 * but it disables the file: its map no longer matches its size.
 */
static int famfs_file_setattr(famfs_idmap_t idmap, struct dentry *dentry,
			      struct iattr *iattr)
{
	struct inode *inode = d_inode(dentry);
	struct famfs_file_meta *meta = famfs_meta(inode);

	if ((iattr->ia_valid & ATTR_SIZE) && meta &&
	    iattr->ia_size != meta->file_size) {
		WRITE_ONCE(meta->error, true);
		pr_warn_ratelimited("%pd: size set to %lld, but its map holds %llu bytes; file disabled\n",
				    dentry, iattr->ia_size, meta->file_size);
	}
	return simple_setattr(idmap, dentry, iattr);
}

const struct address_space_operations famfs_dax_aops = {
	.dirty_folio	= noop_dirty_folio,
};

const struct inode_operations famfs_file_inode_operations = {
	.setattr	= famfs_file_setattr,
	.getattr	= simple_getattr,
};

const struct file_operations famfs_file_operations = {
	.owner			= THIS_MODULE,
	.read_iter		= famfs_read_iter,
	.write_iter		= famfs_write_iter,
	.unlocked_ioctl		= famfs_file_ioctl,
	.mmap			= famfs_file_mmap,
	.get_unmapped_area	= thp_get_unmapped_area,
	.fsync			= noop_fsync,
	.splice_read		= famfs_splice_read,
	.splice_write		= iter_file_splice_write,
	.llseek			= generic_file_llseek,
};
