// SPDX-License-Identifier: GPL-2.0
/*
 * famfs - files in shared (fabric-attached) memory
 *
 * This file: the file system type, its namespace (a ramfs-like tree of
 * directories, files and symlinks that lives only in the dcache), mounting
 * on a DAX-capable device, the fault counters in /sys/fs/famfs and module
 * load/unload.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/namei.h>
#include <linux/pagemap.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>
#include <linux/dax.h>
#include <linux/blkdev.h>
#include <linux/fsnotify.h>
#include <linux/security.h>

#include "famfs_internal.h"

static int famfs_kabi_version = FAMFS_KABI_VERSION;
module_param(famfs_kabi_version, int, 0444);
MODULE_PARM_DESC(famfs_kabi_version,
		 "famfs ioctl ABI version (42: v1 ioctls, 43: also v2 ioctls)");

static const struct super_operations famfs_super_ops;
static const struct inode_operations famfs_dir_inode_operations;

/* ---- inodes and the namespace ---------------------------------------- */

static struct inode *famfs_get_inode(famfs_idmap_t idmap,
				     struct super_block *sb,
				     const struct inode *dir, umode_t mode,
				     dev_t dev)
{
	struct inode *inode = new_inode(sb);

	if (!inode)
		return NULL;

	inode->i_ino = get_next_ino();
	inode_init_owner(idmap, inode, dir, mode);
	inode->i_mapping->a_ops = &famfs_dax_aops;
	famfs_inode_init_times(inode);

	switch (mode & S_IFMT) {
	case S_IFREG:
		inode->i_op = &famfs_file_inode_operations;
		inode->i_fop = &famfs_file_operations;
		break;
	case S_IFDIR:
		inode->i_op = &famfs_dir_inode_operations;
		inode->i_fop = &famfs_dir_operations;
		inc_nlink(inode);	/* for "." */
		break;
	case S_IFLNK:
		inode->i_op = &simple_symlink_inode_operations;
		break;
	default:
		init_special_inode(inode, mode, dev);
		break;
	}
	return inode;
}

static int famfs_mknod(famfs_idmap_t idmap, struct inode *dir,
		       struct dentry *dentry, umode_t mode, dev_t dev)
{
	struct inode *inode;

	inode = famfs_get_inode(idmap, dir->i_sb, dir, mode, dev);
	if (!inode)
		return -ENOSPC;

	d_instantiate(dentry, inode);
	dget(dentry);		/* the dcache holds the tree: pin it */
	famfs_dir_touch(dir);
	return 0;
}

static famfs_mkdir_ret_t famfs_mkdir(famfs_idmap_t idmap, struct inode *dir,
				     struct dentry *dentry, umode_t mode)
{
	int rc = famfs_mknod(idmap, dir, dentry, mode | S_IFDIR, 0);

	if (!rc)
		inc_nlink(dir);
	return FAMFS_MKDIR_RET(rc);
}

static int famfs_create(famfs_idmap_t idmap, struct inode *dir,
			struct dentry *dentry, umode_t mode, bool excl)
{
	return famfs_mknod(idmap, dir, dentry, mode | S_IFREG, 0);
}

static int famfs_symlink(famfs_idmap_t idmap, struct inode *dir,
			 struct dentry *dentry, const char *symname)
{
	size_t len = strlen(symname);
	struct inode *inode;

	if (len >= PAGE_SIZE)
		return -ENAMETOOLONG;

	inode = famfs_get_inode(idmap, dir->i_sb, dir, S_IFLNK | 0777, 0);
	if (!inode)
		return -ENOSPC;

	inode->i_link = kstrndup(symname, len, GFP_KERNEL);
	if (!inode->i_link) {
		iput(inode);
		return -ENOMEM;
	}
	i_size_write(inode, len);

	d_instantiate(dentry, inode);
	dget(dentry);
	famfs_dir_touch(dir);
	return 0;
}

/*
 * MKFILES' create, with @dir (@parent's inode) locked by the caller: a
 * regular file whose owner, mode and map are complete before its name is
 * visible, where open(O_CREAT) + fchown + fchmod + MAP_CREATE would show an
 * empty root-owned file for a moment.  It checks what vfs_create() checks
 * (write and search permission on @dir, the LSM hook) and sends the same
 * fsnotify event, without the in-lookup dentry that lookup_one() builds:
 * the exclusive directory lock already keeps every other lookup of this
 * directory from adding the name.  @mode is applied as given, without the
 * caller's umask: it is the mode the log recorded.  On success the inode
 * owns @meta.
 */
int famfs_create_mapped(famfs_idmap_t idmap, struct dentry *parent,
			struct qstr *name, umode_t mode, kuid_t uid, kgid_t gid,
			struct famfs_file_meta *meta)
{
	struct inode *dir = d_inode(parent);
	struct dentry *dentry;
	struct inode *inode;
	bool fresh = false;
	int rc;

	if (IS_DEADDIR(dir))
		return -ENOENT;
	rc = inode_permission(idmap, dir, MAY_WRITE | MAY_EXEC);
	if (rc)
		return rc;
	dentry = d_hash_and_lookup(parent, name);
	if (IS_ERR(dentry))
		return PTR_ERR(dentry);
	if (dentry && d_really_is_positive(dentry)) {
		dput(dentry);
		return -EEXIST;
	}
	if (!dentry) {
		dentry = d_alloc(parent, name);
		if (!dentry)
			return -ENOMEM;
		/* as simple_lookup() would have made it */
		if (!parent->d_sb->s_d_op)
			d_set_d_op(dentry, &simple_dentry_operations);
		fresh = true;
	}
	rc = security_inode_create(dir, dentry, S_IFREG | mode);
	if (rc)
		goto out;
	rc = -ENOSPC;
	inode = famfs_get_inode(idmap, dir->i_sb, dir, S_IFREG | mode, 0);
	if (!inode)
		goto out;
	inode->i_mode = S_IFREG | mode;	/* inode_init_owner() may strip S_ISGID */
	inode->i_uid = uid;
	inode->i_gid = gid;
	famfs_give_meta(inode, meta);
	if (fresh)
		d_add(dentry, inode);
	else
		d_instantiate(dentry, inode);
	dget(dentry);		/* the dcache holds the tree: pin it */
	famfs_dir_touch(dir);
	fsnotify_create(dir, dentry);
	rc = 0;
out:
	dput(dentry);
	return rc;
}

static const struct inode_operations famfs_dir_inode_operations = {
	.create		= famfs_create,
	.lookup		= simple_lookup,
	.link		= simple_link,
	.unlink		= simple_unlink,
	.symlink	= famfs_symlink,
	.mkdir		= famfs_mkdir,
	.rmdir		= simple_rmdir,
	.mknod		= famfs_mknod,
	.rename		= simple_rename,
};

/* ---- super block ------------------------------------------------------ */

static void famfs_evict_inode(struct inode *inode)
{
	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	if (S_ISREG(inode->i_mode) && inode->i_private) {
		famfs_meta_free(inode->i_private);
		inode->i_private = NULL;
	}
}

static void famfs_free_inode(struct inode *inode)
{
	if (S_ISLNK(inode->i_mode))
		kfree(inode->i_link);
	free_inode_nonrcu(inode);
}

static int famfs_show_options(struct seq_file *m, struct dentry *root)
{
	struct famfs_fs_info *fsi = FAMFS_SB(root->d_sb);

	if (fsi->mode != FAMFS_DEFAULT_MODE)
		seq_printf(m, ",mode=%o", fsi->mode);
	if (READ_ONCE(fsi->dax_error)) {
		/* pairs with the smp_wmb() in famfs_dax_notify_failure */
		smp_rmb();
		seq_printf(m, ",dax_error,dax_error_offset=0x%llx,dax_error_len=0x%llx",
			   fsi->dax_error_offset, fsi->dax_error_len);
	}
	return 0;
}

static const struct super_operations famfs_super_ops = {
	.statfs		= simple_statfs,
	.drop_inode	= generic_delete_inode,
	.evict_inode	= famfs_evict_inode,
	.free_inode	= famfs_free_inode,
	.show_options	= famfs_show_options,
};

/* ---- the backing device ----------------------------------------------- */

/*
 * Drops every DAX mapping of the file system: user page tables and the
 * mapping entries.  Called when the whole device goes away, while its
 * struct pages still exist: an fsdax namespace made with --map=dev keeps
 * them on the device itself, and the unmount that follows would otherwise
 * touch them after they are gone.  Faults re-check dax_error under the
 * invalidate lock, so none maps anything again.
 */
static void famfs_drop_dax_mappings(struct super_block *sb)
{
	struct inode *inode, *prev = NULL;

	/* An unmount under way evicts the inodes itself. */
	if (!down_read_trylock(&sb->s_umount))
		return;
	spin_lock(&sb->s_inode_list_lock);
	list_for_each_entry(inode, &sb->s_inodes, i_sb_list) {
		struct address_space *mapping = inode->i_mapping;

		spin_lock(&inode->i_lock);
		if ((inode->i_state & (I_FREEING | I_WILL_FREE | I_NEW)) ||
		    !mapping->nrpages) {
			spin_unlock(&inode->i_lock);
			continue;
		}
		/* as __iget(): a reference keeps it on the list meanwhile */
		atomic_inc(&inode->i_count);
		spin_unlock(&inode->i_lock);
		spin_unlock(&sb->s_inode_list_lock);

		filemap_invalidate_lock(mapping);
		unmap_mapping_range(mapping, 0, 0, 1);
		truncate_inode_pages(mapping, 0);
		filemap_invalidate_unlock(mapping);

		iput(prev);
		prev = inode;
		cond_resched();
		spin_lock(&sb->s_inode_list_lock);
	}
	spin_unlock(&sb->s_inode_list_lock);
	iput(prev);
	up_read(&sb->s_umount);
}

/*
 * The dax core tells the holder when memory under it fails, or when the
 * whole device goes (kill_dax: offset 0, length U64_MAX).  Mark the file
 * system: all I/O on it then fails with EIO, /proc/mounts shows
 * "dax_error", and the log says why.  When the device goes, its mappings
 * are dropped too (famfs_drop_dax_mappings).
 */
static int famfs_dax_notify_failure(struct dax_device *dax_devp, u64 offset,
				    u64 len, int mf_flags)
{
	struct famfs_fs_info *fsi = dax_holder(dax_devp);

	if (!fsi)
		return -EOPNOTSUPP;

	if (!READ_ONCE(fsi->dax_error)) {
		/* Only shown: a second failure racing this one may win. */
		fsi->dax_error_offset = offset;
		fsi->dax_error_len = len;
		/* the offset before the flag: pairs with famfs_show_options */
		smp_wmb();
	}
	WRITE_ONCE(fsi->dax_error, true);
	pr_err("%s: media failure at offset 0x%llx length 0x%llx (flags 0x%x); file system disabled\n",
	       fsi->devname, offset, len, mf_flags);
	if (offset == 0 && len == U64_MAX)
		famfs_drop_dax_mappings(fsi->sb);
	return 0;
}

static const struct dax_holder_operations famfs_dax_holder_ops = {
	.notify_failure	= famfs_dax_notify_failure,
};

#if IS_ENABLED(CONFIG_DEV_DAX_IOMAP)
/*
 * How many bytes the device-dax instance maps from offset 0 on: its page
 * offsets are contiguous from 0, and direct_access says how far each run
 * goes (-ERANGE past the end).
 */
static u64 famfs_char_dax_size(struct dax_device *dax_devp)
{
	pgoff_t pgoff = 0;
	long n;
	int id;

	id = dax_read_lock();
	while ((n = dax_direct_access(dax_devp, pgoff, LONG_MAX / PAGE_SIZE,
				      DAX_ACCESS, NULL, NULL)) > 0)
		pgoff += n;
	dax_read_unlock(id);
	return (u64)pgoff << PAGE_SHIFT;
}

/*
 * Kernels with the dev_dax_iomap patches (kmod/kernel-patches) let a file
 * system sit directly on a /dev/dax character device: the open device
 * leads to its dax_device (inode_dax), which fs_dax_get() claims for this
 * mount.  The file stays open while mounted.
 */
static int famfs_open_char_dax(struct fs_context *fc,
			       struct famfs_fs_info *fsi, dev_t rdev)
{
	struct dax_device *dax_devp;
	struct file *filp;
	int rc;

	filp = filp_open(fc->source, O_RDWR | O_LARGEFILE, 0);
	if (IS_ERR(filp)) {
		rc = PTR_ERR(filp);
		if (rc == -ENXIO)
			errorfc(fc, "cannot open %s: no device-dax driver is bound to it (system-ram/kmem mode?)",
				fc->source);
		else
			errorfc(fc, "cannot open %s: error %d", fc->source, rc);
		return rc;
	}
	fsi->dax_filp = filp;
	dax_devp = inode_dax(file_inode(filp));
	if (!dax_devp) {
		errorfc(fc, "%s is a character device but not a device-dax instance", fc->source);
		return -ENODEV;
	}
	rc = fs_dax_get(dax_devp, fsi, &famfs_dax_holder_ops);
	if (rc == -EBUSY) {
		errorfc(fc, "%s is in use by another dax holder (mounted already?)", fc->source);
		return rc;
	}
	if (rc) {
		errorfc(fc, "cannot claim %s: error %d", fc->source, rc);
		return rc;
	}
	fsi->dax_devp = dax_devp;
	fsi->dax_part_off = 0;
	fsi->dev_size = famfs_char_dax_size(dax_devp);
	if (fsi->dev_size == 0) {
		errorfc(fc, "%s does not support fs-dax access (not bound to device_dax?)", fc->source);
		return -ENXIO;
	}
	return 0;
}
#else
static int famfs_open_char_dax(struct fs_context *fc,
			       struct famfs_fs_info *fsi, dev_t rdev)
{
	errorfc(fc,
		"cannot mount %s: it is a devdax character device and this kernel lacks dev_dax_iomap (CONFIG_DEV_DAX_IOMAP); use a pmem (fsdax) block device",
		fc->source);
	return -EOPNOTSUPP;
}
#endif

static int famfs_open_device(struct fs_context *fc, struct famfs_fs_info *fsi)
{
	struct path path;
	umode_t mode;
	dev_t rdev;
	int rc;

	rc = kern_path(fc->source, LOOKUP_FOLLOW, &path);
	if (rc) {
		errorfc(fc, "cannot find %s: error %d", fc->source, rc);
		return rc;
	}
	mode = d_backing_inode(path.dentry)->i_mode;
	rdev = d_backing_inode(path.dentry)->i_rdev;
	path_put(&path);

	if (S_ISCHR(mode))
		return famfs_open_char_dax(fc, fsi, rdev);
	if (!S_ISBLK(mode)) {
		errorfc(fc, "%s is neither a pmem block device nor a dax device",
			fc->source);
		return -ENOTBLK;
	}

	rc = famfs_bdev_open(&fsi->bdev, fc->source, fsi);
	if (rc) {
		errorfc(fc, "cannot open %s: error %d", fc->source, rc);
		return rc;
	}

	fsi->dax_devp = fs_dax_get_by_bdev(fsi->bdev.bdev, &fsi->dax_part_off,
					   fsi, &famfs_dax_holder_ops);
	if (!fsi->dax_devp) {
		errorfc(fc, "%s does not support DAX, or another DAX user holds it",
			fc->source);
		return -ENODEV;
	}
	fsi->dev_size = bdev_nr_bytes(fsi->bdev.bdev);
	return 0;
}

static void famfs_close_device(struct famfs_fs_info *fsi)
{
	if (fsi->dax_devp) {
		fs_put_dax(fsi->dax_devp, fsi);
		fsi->dax_devp = NULL;
	}
	if (fsi->dax_filp) {
		filp_close(fsi->dax_filp, NULL);
		fsi->dax_filp = NULL;
	}
	famfs_bdev_close(&fsi->bdev);
}

/* ---- mounting ------------------------------------------------------- */

enum famfs_param {
	Opt_mode,
};

static const struct fs_parameter_spec famfs_fs_parameters[] = {
	fsparam_u32oct("mode", Opt_mode),
	{}
};

static int famfs_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct famfs_fs_info *fsi = fc->s_fs_info;
	struct fs_parse_result result;
	int opt;

	opt = fs_parse(fc, famfs_fs_parameters, param, &result);
	if (opt < 0)
		return opt;	/* -ENOPARAM lets the VFS handle "source" */

	switch (opt) {
	case Opt_mode:
		fsi->mode = result.uint_32 & S_IALLUGO;
		break;
	}
	return 0;
}

static int famfs_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct famfs_fs_info *fsi = sb->s_fs_info;
	struct inode *inode;
	int rc;

	if (!fc->source)
		return invalfc(fc, "no backing device given");

	fsi->devname = kstrdup(fc->source, GFP_KERNEL);
	if (!fsi->devname)
		return -ENOMEM;
	fsi->sb = sb;

	rc = famfs_open_device(fc, fsi);
	if (rc)
		return rc;

	sb->s_maxbytes = MAX_LFS_FILESIZE;
	sb->s_blocksize = PAGE_SIZE;
	sb->s_blocksize_bits = PAGE_SHIFT;
	sb->s_magic = FAMFS_STATFS_MAGIC;
	sb->s_op = &famfs_super_ops;
	sb->s_time_gran = 1;

	inode = famfs_get_inode(FAMFS_NOP_IDMAP, sb, NULL,
				S_IFDIR | fsi->mode, 0);
	sb->s_root = d_make_root(inode);
	if (!sb->s_root)
		return -ENOMEM;
	return 0;
}

static int famfs_get_tree(struct fs_context *fc)
{
	return get_tree_nodev(fc, famfs_fill_super);
}

static void famfs_free_fsi(struct famfs_fs_info *fsi)
{
	if (!fsi)
		return;
	famfs_close_device(fsi);
	kfree(fsi->devname);
	kfree(fsi);
}

static void famfs_free_fc(struct fs_context *fc)
{
	/* Still set only if the super block was never created */
	famfs_free_fsi(fc->s_fs_info);
}

static const struct fs_context_operations famfs_context_ops = {
	.free		= famfs_free_fc,
	.parse_param	= famfs_parse_param,
	.get_tree	= famfs_get_tree,
};

static int famfs_init_fs_context(struct fs_context *fc)
{
	struct famfs_fs_info *fsi;

	fsi = kzalloc(sizeof(*fsi), GFP_KERNEL);
	if (!fsi)
		return -ENOMEM;

	fsi->mode = FAMFS_DEFAULT_MODE;
	fc->s_fs_info = fsi;
	fc->ops = &famfs_context_ops;
	return 0;
}

static void famfs_kill_sb(struct super_block *sb)
{
	struct famfs_fs_info *fsi = sb->s_fs_info;

	/* Drop every inode (and its DAX mapping) before the device goes */
	kill_litter_super(sb);
	famfs_free_fsi(fsi);
}

static struct file_system_type famfs_fs_type = {
	.owner			= THIS_MODULE,
	.name			= "famfs",
	.init_fs_context	= famfs_init_fs_context,
	.parameters		= famfs_fs_parameters,
	.kill_sb		= famfs_kill_sb,
};

/* ---- /sys/fs/famfs fault counters -------------------------------------- */

static int famfs_fault_count_enable;
static atomic64_t famfs_fault_ct[FAMFS_NR_FAULT_KINDS];

void famfs_count_fault(enum famfs_fault_kind kind)
{
	if (READ_ONCE(famfs_fault_count_enable))
		atomic64_inc(&famfs_fault_ct[kind]);
}

static ssize_t fault_count_enable_show(struct kobject *kobj,
				       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(famfs_fault_count_enable));
}

/* Writing a value > 0 clears the counters and starts counting; 0 stops */
static ssize_t fault_count_enable_store(struct kobject *kobj,
					struct kobj_attribute *attr,
					const char *buf, size_t count)
{
	int val, i, rc;

	rc = kstrtoint(buf, 0, &val);
	if (rc)
		return rc;

	if (val > 0) {
		WRITE_ONCE(famfs_fault_count_enable, 0);
		for (i = 0; i < FAMFS_NR_FAULT_KINDS; i++)
			atomic64_set(&famfs_fault_ct[i], 0);
		WRITE_ONCE(famfs_fault_count_enable, 1);
	} else {
		WRITE_ONCE(famfs_fault_count_enable, 0);
	}
	return count;
}

static ssize_t famfs_ct_show(enum famfs_fault_kind kind, char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  (long long)atomic64_read(&famfs_fault_ct[kind]));
}

static ssize_t pte_fault_ct_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	return famfs_ct_show(FAMFS_PTE_FAULT, buf);
}

static ssize_t pmd_fault_ct_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	return famfs_ct_show(FAMFS_PMD_FAULT, buf);
}

static ssize_t pud_fault_ct_show(struct kobject *kobj,
				 struct kobj_attribute *attr, char *buf)
{
	return famfs_ct_show(FAMFS_PUD_FAULT, buf);
}

static struct kobj_attribute famfs_attr_enable =
	__ATTR(fault_count_enable, 0660, fault_count_enable_show,
	       fault_count_enable_store);
static struct kobj_attribute famfs_attr_pte =
	__ATTR(pte_fault_ct, 0440, pte_fault_ct_show, NULL);
static struct kobj_attribute famfs_attr_pmd =
	__ATTR(pmd_fault_ct, 0440, pmd_fault_ct_show, NULL);
static struct kobj_attribute famfs_attr_pud =
	__ATTR(pud_fault_ct, 0440, pud_fault_ct_show, NULL);

static struct attribute *famfs_attrs[] = {
	&famfs_attr_enable.attr,
	&famfs_attr_pte.attr,
	&famfs_attr_pmd.attr,
	&famfs_attr_pud.attr,
	NULL,
};

static const struct attribute_group famfs_attr_group = {
	.attrs = famfs_attrs,
};

static struct kobject *famfs_kobj;

/* ---- module ----------------------------------------------------------- */

static int __init famfs_init(void)
{
	int rc;

	famfs_kobj = kobject_create_and_add("famfs", fs_kobj);
	if (!famfs_kobj)
		return -ENOMEM;

	rc = sysfs_create_group(famfs_kobj, &famfs_attr_group);
	if (rc)
		goto put_kobj;

	rc = register_filesystem(&famfs_fs_type);
	if (rc)
		goto remove_group;

	pr_info("loaded (kabi %d)\n", famfs_kabi_version);
	return 0;

remove_group:
	sysfs_remove_group(famfs_kobj, &famfs_attr_group);
put_kobj:
	kobject_put(famfs_kobj);
	return rc;
}

static void __exit famfs_exit(void)
{
	unregister_filesystem(&famfs_fs_type);
	sysfs_remove_group(famfs_kobj, &famfs_attr_group);
	kobject_put(famfs_kobj);
	pr_info("unloaded\n");
}

module_init(famfs_init);
module_exit(famfs_exit);

MODULE_DESCRIPTION("famfs: files in shared memory, mapped at memory speed");
MODULE_LICENSE("GPL");
MODULE_ALIAS_FS("famfs");
