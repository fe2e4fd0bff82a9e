// SPDX-License-Identifier: GPL-2.0
/*
 * famfs - files in shared (fabric-attached) memory
 *
 * This file: directory file operations, which are libfs's plus one ioctl,
 * MKFILES: create a batch of files in the directory, each with its owner,
 * mode and extent map, in one system call.  A replay of a full log makes
 * tens of thousands of files; through open(O_CREAT) + MAP_CREATE_V2 +
 * close that is three system calls, a struct file and a path walk each.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/err.h>

#include "famfs_internal.h"

static bool famfs_mkfiles_on = true;
module_param_named(mkfiles, famfs_mkfiles_on, bool, 0444);
MODULE_PARM_DESC(mkfiles,
		 "offer the MKFILES directory ioctl (0: answer ENOTTY like upstream's module)");

static int famfs_mkfile_name(const struct famfs_ioc_mkfile *req,
			     char *name)
{
	if (req->name_len < 1 || req->name_len > NAME_MAX)
		return -EINVAL;
	if (copy_from_user(name, u64_to_user_ptr(req->name), req->name_len))
		return -EFAULT;
	name[req->name_len] = '\0';
	if (strlen(name) != req->name_len || strchr(name, '/'))
		return -EINVAL;
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	return 0;
}

/*
 * One file of a MKFILES batch.  The request is copied in and its map checked
 * before the directory is locked; the lock covers only the create itself.
 */
static int famfs_mkfile(struct file *dirfile, const struct famfs_ioc_mkfile *req,
			char *name)
{
	struct dentry *parent = dirfile->f_path.dentry;
	struct inode *dir = d_inode(parent);
	struct qstr qname;
	struct famfs_file_meta *meta;
	kuid_t uid;
	kgid_t gid;
	int rc;

	if (req->reserved || (req->mode & ~07777))
		return -EINVAL;
	uid = make_kuid(current_user_ns(), req->uid);
	gid = make_kgid(current_user_ns(), req->gid);
	if (!uid_valid(uid) || !gid_valid(gid))
		return -EINVAL;
	rc = famfs_mkfile_name(req, name);
	if (rc)
		return rc;

	/* The map first: a refused one must not leave an empty file behind */
	meta = famfs_meta_from_user(u64_to_user_ptr(req->fmap));
	if (IS_ERR(meta))
		return PTR_ERR(meta);
	rc = -EINVAL;
	if (meta->file_type != FAMFS_REG)
		goto free_meta;
	rc = famfs_meta_validate(FAMFS_SB(dir->i_sb), meta);
	if (rc)
		goto free_meta;

	qname = (struct qstr)QSTR_INIT(name, req->name_len);
	inode_lock_nested(dir, I_MUTEX_PARENT);
	rc = famfs_create_mapped(famfs_file_idmap(dirfile), parent, &qname,
				 req->mode, uid, gid, meta);
	inode_unlock(dir);
	if (!rc)
		meta = NULL;	/* the inode has it now */
free_meta:
	famfs_meta_free(meta);
	return rc;
}

static long famfs_ioc_mkfiles(struct file *file, void __user *arg)
{
	struct famfs_ioc_mkfile __user *ureq;
	struct famfs_ioc_mkfiles batch;
	struct famfs_ioc_mkfile req;
	char *name;
	long made = 0;
	u32 i;
	int rc;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&batch, arg, sizeof(batch)))
		return -EFAULT;
	if (!batch.count || batch.count > FAMFS_IOC_MAX_MKFILES || batch.flags)
		return -EINVAL;
	ureq = u64_to_user_ptr(batch.files);

	name = kmalloc(NAME_MAX + 1, GFP_KERNEL);
	if (!name)
		return -ENOMEM;
	rc = mnt_want_write_file(file);
	if (rc)
		goto out;

	for (i = 0; i < batch.count; i++) {
		if (copy_from_user(&req, &ureq[i], sizeof(req))) {
			rc = -EFAULT;
			break;
		}
		req.result = famfs_mkfile(file, &req, name);
		if (!req.result)
			made++;
		if (put_user(req.result, &ureq[i].result)) {
			rc = -EFAULT;
			break;
		}
		cond_resched();
	}
	mnt_drop_write_file(file);
out:
	kfree(name);
	return rc ? rc : made;
}

static long famfs_dir_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	switch (cmd) {
	case FAMFSIOC_MKFILES:
		if (!famfs_mkfiles_on)
			return -ENOTTY;
		return famfs_ioc_mkfiles(file, (void __user *)arg);
	default:
		return -ENOTTY;
	}
}

/* libfs's simple_dir_operations, plus the ioctl */
const struct file_operations famfs_dir_operations = {
	.open		= dcache_dir_open,
	.release	= dcache_dir_close,
	.llseek		= dcache_dir_lseek,
	.read		= generic_read_dir,
	.iterate_shared	= dcache_readdir,
	.fsync		= noop_fsync,
	.unlocked_ioctl	= famfs_dir_ioctl,
};
