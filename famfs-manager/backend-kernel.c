// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel backend: famfs.ko serves the files.  At attach the device is
 * mounted (mount -t famfs, noatime, nosuid, noexec, nodev), .meta/.superblock
 * and .meta/.log are created with MAP_CREATE_V2 (file types SUPERBLOCK and
 * LOG, so upstream's tools work on the mount), and the namespace the log
 * describes is instantiated: directories with their mode and owner, files
 * in batches of siblings with famfs.ko's MKFILES ioctl (kernel-mkfiles.c),
 * or, with a module that lacks it, one at a time with open(O_CREAT),
 * fchown and MAP_CREATE_V2.  Clients get no write bits.
 * A path that is already there is compared with its log entry; a
 * difference is a conflict, reported, never papered over.
 *
 * The daemon reads and appends the log through the DAX mappings of the two
 * .meta files once they exist: a pmem block device mapped directly goes
 * through the page cache, which neither sees other hosts' appends nor
 * reaches the memory the kernel's DAX mappings read.  So the mount and
 * .meta come first (kernel_prepare, before the replay); on a fresh mount a
 * worker thread then makes each node as the replay produces it
 * (kernel-queue.c), and kernel_attach, after the replay, waits for it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <mntent.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "kernel.h"
#include "log.h"
#include "logging.h"
#include "medium-guard.h"

#define KERNEL_STATFS_MAGIC      0x87b282feU   /* standalone famfs.ko */
#define KERNEL_STATFS_MAGIC_OLD  0x87b282ffU
#define KERNEL_SYSFS_DIR         "/sys/fs/famfs"
#define KERNEL_MAX_DEPTH         40
#define KERNEL_CHECK_MAX_NODES   (1u << 24)
#define KERNEL_STATE_DIR         "/run/famfs-manager"
#define KERNEL_STATE_MAGIC       "FAMFSKS1"
#define KERNEL_STATE_MAX_DIRS    (1u << 20)

/*
 * What an attach left in the mount, kept in KERNEL_STATE_DIR (tmpfs: it
 * lives as long as the mount can) so that a restarted daemon adopting the
 * mount need not open every file again: the mount's identity, how many
 * namespace nodes are in it exactly as the log says, and the inode and
 * ctime of every directory among them.  Any create, unlink or rename in a
 * directory, and any chmod or chown of it, changes its ctime; famfs maps
 * never change once set.  So when the mount id, the device and every
 * directory are as recorded, the first nodes_done nodes are trusted and only
 * the rest is instantiated; anything else falls back to verifying every
 * file.  The daemon updates the record after each change it makes, and
 * drops the trust (nodes_done 0) when it finds a directory changed by
 * someone else or a node it could not instantiate.
 */
struct kstate_hdr {
	char magic[8];
	uint64_t mnt_id;
	uint64_t dev;
	uint8_t uuid[16];
	uint32_t nodes_done;
	uint32_t ndirs;
};

struct kstate_dir {
	uint32_t node;
	uint32_t pad;
	uint64_t ino;
	int64_t ctime_sec;
	int64_t ctime_nsec;
};

extern char **environ;

struct kstate {
	int root;                 /* O_PATH of the mount's root */
	bool mounted;             /* we mounted it, so we unmount it */
	bool ready;               /* .meta done; instantiate goes to the mount */
	uint8_t *view;            /* .meta/.superblock, then .meta/.log, as on the medium */
	size_t view_len;
	struct famfs_superblock *dev_sb;     /* the library's own pointers */
	struct famfs_log_header *dev_log;
	struct kernel_stats st;
	char first_conflict[FAMFS_ERR_MSG_MAX];
	/*
	 * While attach instantiates the namespace: the last parent directory
	 * opened (node ids come in log order, so siblings mostly follow each
	 * other), and what a new file there gets by itself, so fchown and
	 * fchmod run only when the log asks for something else.
	 */
	bool caching;
	uint32_t pnode;
	int pfd;
	gid_t pgid;               /* gid a new file in pfd gets */
	uid_t euid;
	int umask;                /* -1: unknown, always fchmod */
	/* the adopt record (see struct kstate_hdr); state_fd -1: none */
	int state_fd;
	char state_path[256];
	struct kstate_hdr sh;
	struct kstate_dir *dirs;
	uint32_t dirs_cap;
	uint32_t trusted;         /* nodes this attach took from the record */
	/* files queued for MKFILES; mkfiles false once the module said ENOTTY */
	struct kernel_mkfiles *batch;
	bool mkfiles;
	/*
	 * What attach is to make, in log order.  On a fresh mount the replay
	 * fills it (kernel_instantiate) while the worker empties it.
	 */
	struct kernel_queue *queue;
	pthread_t worker;
	bool streaming;           /* the worker runs; joined at attach */
	uint64_t fill_errors;     /* nodes the replay could not queue */
	uint64_t t_prepared;      /* when the mount and .meta were done */
};

static uint64_t mono_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

const char *backend_choice_name(enum backend_choice c)
{
	switch (c) {
	case BACKEND_KERNEL:
		return "kernel";
	case BACKEND_VIEW:
		return "view";
	default:
		return "auto";
	}
}

int backend_choice_parse(const char *s, enum backend_choice *ret)
{
	if (!strcmp(s, "auto"))
		*ret = BACKEND_AUTO;
	else if (!strcmp(s, "kernel"))
		*ret = BACKEND_KERNEL;
	else if (!strcmp(s, "view"))
		*ret = BACKEND_VIEW;
	else
		return -EINVAL;
	return 0;
}

/* ---- module ---------------------------------------------------------- */

bool kernel_famfs_available(const char *root)
{
	char path[4096], line[256];
	struct stat st;
	bool found = false;
	FILE *fp;

	if (!root)
		root = "";
	snprintf(path, sizeof(path), "%s/sys/module/famfs", root);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return true;
	snprintf(path, sizeof(path), "%s/proc/filesystems", root);
	fp = fopen(path, "re");
	if (!fp)
		return false;
	while (!found && fgets(line, sizeof(line), fp)) {
		char *name = strrchr(line, '\t');

		name = name ? name + 1 : line;
		name[strcspn(name, " \t\r\n")] = '\0';
		found = strcmp(name, "famfs") == 0;
	}
	fclose(fp);
	return found;
}

int kernel_famfs_load(const char *spec, struct famfs_err *err)
{
	size_t n;
	int r;

	if (!spec || !spec[0])
		spec = "famfs";
	n = strlen(spec);
	if (n > 3 && strcmp(spec + n - 3, ".ko") == 0) {
		int fd = open(spec, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			return famfs_err_set(err, -errno, "cannot open %s: %s", spec, strerror(errno));
		r = (int)syscall(SYS_finit_module, fd, "", 0);
		r = r < 0 ? -errno : 0;
		close(fd);
		if (r == -EEXIST)
			return 0;
		if (r < 0)
			return famfs_err_set(err, r, "cannot load %s: %s", spec, strerror(-r));
		return 0;
	} else {
		char *argv[] = { (char *)"modprobe", (char *)"-q", (char *)spec, NULL };
		pid_t pid;
		int status;

		if (strchr(spec, '/') || spec[0] == '-')
			return famfs_err_set(err, -EINVAL, "\"%s\" is neither a .ko path nor a module name", spec);
		r = posix_spawnp(&pid, "modprobe", NULL, NULL, argv, environ);
		if (r != 0)
			return famfs_err_set(err, -r, "cannot run modprobe: %s", strerror(r));
		while (waitpid(pid, &status, 0) < 0)
			if (errno != EINTR)
				return famfs_err_set(err, -errno, "waitpid: %s", strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return famfs_err_set(err, -ENOENT, "modprobe %s failed (status %d)", spec,
					     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return 0;
	}
}

/* ---- maps ------------------------------------------------------------ */

void kernel_fmap_fix_pointers(struct kernel_fmap *m)
{
	if (m->fmap.fioc_ext_type == FAMFS_IOC_EXT_INTERLEAVE) {
		m->fmap.kie = &m->ie;
		m->ie.ie_strips = m->strips;
	} else {
		m->fmap.kse = m->se;
	}
}

void kernel_fmap_meta(uint32_t file_type, uint64_t offset, uint64_t len, struct kernel_fmap *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->fmap.fioc_file_size = len;
	ret->fmap.fioc_file_type = file_type;
	ret->fmap.fioc_ext_type = FAMFS_IOC_EXT_SIMPLE;
	ret->fmap.fioc_nextents = 1;
	ret->se[0].offset = offset;
	ret->se[0].len = len;
	kernel_fmap_fix_pointers(ret);
}

int kernel_fmap_from_entry(const struct famfs_log_entry *e, struct kernel_fmap *ret,
			   struct famfs_err *err)
{
	const struct famfs_log_file_meta *fm = &e->file;

	memset(ret, 0, sizeof(*ret));
	if (e->type != FAMFS_LOG_FILE)
		return famfs_err_set(err, -EINVAL, "log entry of type %" PRIu32 " is not a file", e->type);
	ret->fmap.fioc_file_size = fm->size;
	ret->fmap.fioc_file_type = FAMFS_REG;
	if (fm->ext_type == FAMFS_EXT_SIMPLE) {
		if (fm->nextents < 1 || fm->nextents > FAMFS_IOC_MAX_SIMPLE_EXTENTS)
			return famfs_err_set(err, -EINVAL, "%" PRIu32 " simple extents (1 to %d)",
					     fm->nextents, FAMFS_IOC_MAX_SIMPLE_EXTENTS);
		ret->fmap.fioc_ext_type = FAMFS_IOC_EXT_SIMPLE;
		ret->fmap.fioc_nextents = fm->nextents;
		for (uint32_t i = 0; i < fm->nextents; i++) {
			ret->se[i].devindex = fm->se[i].devindex;
			ret->se[i].offset = fm->se[i].offset;
			ret->se[i].len = fm->se[i].len;
		}
	} else if (fm->ext_type == FAMFS_EXT_INTERLEAVED) {
		const struct famfs_interleaved_extent *ie = &fm->ie[0];
		uint64_t min_len = UINT64_MAX;

		if (fm->nextents != 1)
			return famfs_err_set(err, -EINVAL, "%" PRIu32 " interleaved extents (only 1)",
					     fm->nextents);
		if (ie->nstrips < 1 || ie->nstrips > FAMFS_MAX_STRIPS || ie->chunk_size == 0)
			return famfs_err_set(err, -EINVAL, "interleaved extent with %" PRIu64
					     " strips and chunk %" PRIu64, ie->nstrips, ie->chunk_size);
		ret->fmap.fioc_ext_type = FAMFS_IOC_EXT_INTERLEAVE;
		ret->fmap.fioc_niext = 1;
		ret->ie.ie_nstrips = ie->nstrips;
		ret->ie.ie_chunk_size = ie->chunk_size;
		for (uint64_t j = 0; j < ie->nstrips; j++) {
			ret->strips[j].devindex = ie->strips[j].devindex;
			ret->strips[j].offset = ie->strips[j].offset;
			ret->strips[j].len = ie->strips[j].len;
			if (ie->strips[j].len < min_len)
				min_len = ie->strips[j].len;
		}
		/* Round robin: the shortest strip bounds what the extent holds. */
		if (min_len > UINT64_MAX / ie->nstrips)
			return famfs_err_set(err, -EINVAL, "interleaved extent too large");
		ret->ie.ie_nbytes = min_len / ie->chunk_size * ie->chunk_size * ie->nstrips;
	} else {
		return famfs_err_set(err, -EINVAL, "unknown extent type %" PRIu32, fm->ext_type);
	}
	kernel_fmap_fix_pointers(ret);
	return 0;
}

int kernel_fmap_compare(const struct famfs_ioc_get_fmap *got, const struct kernel_fmap *want,
			struct famfs_err *err)
{
	const struct famfs_ioc_fmap *g = &got->iocmap, *w = &want->fmap;

	if (g->fioc_file_size != w->fioc_file_size)
		return famfs_err_set(err, -EILSEQ, "size %llu in the kernel, %llu in the log",
				     (unsigned long long)g->fioc_file_size,
				     (unsigned long long)w->fioc_file_size);
	if (g->fioc_file_type != w->fioc_file_type)
		return famfs_err_set(err, -EILSEQ, "file type %u in the kernel, %u expected",
				     g->fioc_file_type, w->fioc_file_type);
	if (g->fioc_ext_type != w->fioc_ext_type)
		return famfs_err_set(err, -EILSEQ, "extent type %u in the kernel, %u in the log",
				     g->fioc_ext_type, w->fioc_ext_type);
	if (w->fioc_ext_type == FAMFS_IOC_EXT_SIMPLE) {
		if (g->fioc_nextents != w->fioc_nextents)
			return famfs_err_set(err, -EILSEQ, "%u extents in the kernel, %u in the log",
					     g->fioc_nextents, w->fioc_nextents);
		if (w->fioc_nextents > FAMFS_MAX_EXTENTS)
			return famfs_err_set(err, -E2BIG, "%u extents: more than MAP_GET_V2 reports",
					     w->fioc_nextents);
		for (uint32_t i = 0; i < w->fioc_nextents; i++)
			if (got->ikse[i].offset != want->se[i].offset || got->ikse[i].len != want->se[i].len)
				return famfs_err_set(err, -EILSEQ,
						     "extent %u is 0x%llx+0x%llx in the kernel, 0x%llx+0x%llx in the log",
						     i, (unsigned long long)got->ikse[i].offset,
						     (unsigned long long)got->ikse[i].len,
						     (unsigned long long)want->se[i].offset,
						     (unsigned long long)want->se[i].len);
		return 0;
	}
	if (g->fioc_niext != 1)
		return famfs_err_set(err, -EILSEQ, "%u interleaved extents in the kernel, 1 in the log",
				     g->fioc_niext);
	if (got->ks.ikie.ie_nstrips != want->ie.ie_nstrips ||
	    got->ks.ikie.ie_chunk_size != want->ie.ie_chunk_size ||
	    got->ks.ikie.ie_nbytes != want->ie.ie_nbytes)
		return famfs_err_set(err, -EILSEQ,
				     "interleave %llu strips, chunk 0x%llx, 0x%llx bytes in the kernel; %llu, 0x%llx, 0x%llx from the log",
				     (unsigned long long)got->ks.ikie.ie_nstrips,
				     (unsigned long long)got->ks.ikie.ie_chunk_size,
				     (unsigned long long)got->ks.ikie.ie_nbytes,
				     (unsigned long long)want->ie.ie_nstrips,
				     (unsigned long long)want->ie.ie_chunk_size,
				     (unsigned long long)want->ie.ie_nbytes);
	for (uint64_t j = 0; j < want->ie.ie_nstrips && j < FAMFS_MAX_STRIPS; j++)
		if (got->ks.kie_strips[j].offset != want->strips[j].offset ||
		    got->ks.kie_strips[j].len != want->strips[j].len)
			return famfs_err_set(err, -EILSEQ,
					     "strip %llu is 0x%llx+0x%llx in the kernel, 0x%llx+0x%llx in the log",
					     (unsigned long long)j,
					     (unsigned long long)got->ks.kie_strips[j].offset,
					     (unsigned long long)got->ks.kie_strips[j].len,
					     (unsigned long long)want->strips[j].offset,
					     (unsigned long long)want->strips[j].len);
	return 0;
}

/* ---- fault counters -------------------------------------------------- */

static int read_u64_file(const char *path, uint64_t *ret)
{
	char buf[64], *end;
	unsigned long long v;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	buf[n] = '\0';
	if (buf[0] < '0' || buf[0] > '9')
		return -EBADMSG;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || (*end && *end != '\n'))
		return -EBADMSG;
	*ret = v;
	return 0;
}

int kernel_read_fault_counters(const char *dir, uint64_t ret[3])
{
	static const char *const names[3] = { "pte_fault_ct", "pmd_fault_ct", "pud_fault_ct" };
	uint64_t v[3];
	char path[4096];

	for (int i = 0; i < 3; i++) {
		int r;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		r = read_u64_file(path, &v[i]);
		if (r < 0)
			return r;
	}
	memcpy(ret, v, sizeof(v));
	return 0;
}

/* The value of "@name=0x..." among @m's options; false when it is not there. */
static bool mount_option_u64(const struct mntent *m, const char *name, uint64_t *ret)
{
	const char *p = hasmntopt(m, name);
	char *end;

	if (!p || p[strlen(name)] != '=')
		return false;
	errno = 0;
	*ret = strtoull(p + strlen(name) + 1, &end, 0);
	return errno == 0 && (*end == ',' || *end == '\0');
}

int kernel_media_error(const char *mounts, const char *mountpoint, char *buf, size_t len)
{
	struct mntent *m;
	int found = 0;
	FILE *mnt;

	mnt = setmntent(mounts, "re");
	if (!mnt)
		return -errno;
	while (!found && (m = getmntent(mnt))) {
		uint64_t off, size;

		if (strcmp(m->mnt_dir, mountpoint) != 0 || strcmp(m->mnt_type, "famfs") != 0 ||
		    !hasmntopt(m, "dax_error"))
			continue;
		found = 1;
		if (!mount_option_u64(m, "dax_error_offset", &off) || !mount_option_u64(m, "dax_error_len", &size))
			snprintf(buf, len, "media failure reported by famfs.ko (dax_error; the module does not say "
				 "where): every read, write and fault on %s fails with EIO", mountpoint);
		else if (off == 0 && size == UINT64_MAX)
			snprintf(buf, len, "media failure reported by famfs.ko: the whole device failed or went away; "
				 "every read, write and fault on %s fails with EIO", mountpoint);
		else
			snprintf(buf, len, "media failure reported by famfs.ko at device offset 0x%" PRIx64
				 ", length 0x%" PRIx64 ": every read, write and fault on %s fails with EIO",
				 off, size, mountpoint);
	}
	endmntent(mnt);
	return found;
}

static int kernel_mount_media_error(struct backend_target *t, char *buf, size_t len)
{
	const struct kstate *ks = t->data;

	if (!ks || !ks->ready)
		return 0;
	return kernel_media_error("/proc/self/mounts", t->mountpoint, buf, len);
}

/* Counting is off until someone enables it; enabling clears the counters. */
static void enable_fault_counting(void)
{
	uint64_t on = 0;
	int fd;

	if (read_u64_file(KERNEL_SYSFS_DIR "/fault_count_enable", &on) < 0 || on)
		return;
	fd = open(KERNEL_SYSFS_DIR "/fault_count_enable", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "1\n", 2) < 0)
		fprintf(stderr, "famfs-manager: cannot enable famfs fault counting: %s\n", strerror(errno));
	close(fd);
}

/* ---- paths in the mount ---------------------------------------------- */

/* Opens a path below the mount's root, never through a symlink or "..". */
static int open_beneath(int root, const char *rel, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV,
	};
	long fd = syscall(SYS_openat2, root, rel, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

/* The directory holding @rel (readable: MKFILES is its ioctl), and the last component of @rel. */
static int open_parent(int root, const char *rel, const char **ret_name)
{
	const char *slash = strrchr(rel, '/');
	char dir[FAMFS_MAX_PATHLEN];
	size_t n;

	if (!slash) {
		*ret_name = rel;
		return open_beneath(root, ".", O_RDONLY | O_DIRECTORY, 0);
	}
	n = (size_t)(slash - rel);
	if (n == 0 || n >= sizeof(dir))
		return -EINVAL;
	memcpy(dir, rel, n);
	dir[n] = '\0';
	*ret_name = slash + 1;
	return open_beneath(root, dir, O_RDONLY | O_DIRECTORY, 0);
}

static int mkdir_p(const char *path, mode_t mode)
{
	char buf[4096];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		buf[i] = i < n ? '/' : '\0';
	}
	return 0;
}

static bool is_famfs_dir(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return false;
	return (uint32_t)sf.f_type == KERNEL_STATFS_MAGIC || (uint32_t)sf.f_type == KERNEL_STATFS_MAGIC_OLD;
}

/* ---- instantiating ---------------------------------------------------- */

static uint32_t file_mode(const struct backend_target *t, uint32_t mode)
{
	mode &= 07777;
	return t->fs->master ? mode : mode & ~0222u;
}

__attribute__((format(printf, 4, 5)))
static int conflict(struct backend_target *t, struct kstate *ks, struct famfs_err *err, const char *fmt, ...)
{
	va_list ap;
	char msg[FAMFS_ERR_MSG_MAX];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ks->st.conflicts++;
	if (!ks->first_conflict[0])
		snprintf(ks->first_conflict, sizeof(ks->first_conflict), "%s", msg);
	return famfs_err_set(err, -EEXIST, "%s", msg);
}

static int compare_owner(struct backend_target *t, struct kstate *ks, const char *rel, const struct stat *st,
			 uint32_t mode, uint32_t uid, uint32_t gid, struct famfs_err *err)
{
	if ((st->st_mode & 07777) != mode || st->st_uid != uid || st->st_gid != gid)
		return conflict(t, ks, err,
				"\"%s\" is in the mount with mode %04o owner %u:%u, the log says %04o %u:%u",
				rel, (unsigned)(st->st_mode & 07777), (unsigned)st->st_uid,
				(unsigned)st->st_gid, mode, uid, gid);
	return 0;
}

/* The process umask, from /proc/self/status (umask(2) would change it); -1 if unknown. */
static int read_umask(void)
{
	char line[128];
	int m = -1;
	FILE *fp = fopen("/proc/self/status", "re");

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (strncmp(line, "Umask:", 6) == 0) {
			m = (int)strtol(line + 6, NULL, 8);
			break;
		}
	fclose(fp);
	return m;
}

/*
 * The directory that holds @it, and the last component of its path.  During
 * attach the descriptor is kept for the next sibling (*owned false: do not
 * close it); otherwise the caller closes it.
 */
static int parent_fd(struct kstate *ks, const struct kernel_item *it, const char **name, bool *owned)
{
	struct stat st;
	int dfd;

	*owned = !ks->caching;
	if (ks->caching && ks->pfd >= 0 && ks->pnode == it->parent) {
		*name = it->path + it->name_off;
		return ks->pfd;
	}
	dfd = open_parent(ks->root, it->path, name);
	if (dfd < 0 || !ks->caching)
		return dfd;
	if (ks->pfd >= 0)
		close(ks->pfd);
	ks->pfd = dfd;
	ks->pnode = it->parent;
	ks->pgid = (gid_t)-1;
	if (fstat(dfd, &st) == 0)
		ks->pgid = (st.st_mode & S_ISGID) ? st.st_gid : getegid();
	return dfd;
}

static void parent_cache_drop(struct kstate *ks)
{
	if (ks->pfd >= 0)
		close(ks->pfd);
	ks->pfd = -1;
	ks->caching = false;
}

/*
 * What the mount is to get for @node: its path, mode, owner and, for a
 * file, its map, all by value.  @e is the entry as the replay validated
 * it; without one, a re-checked private copy is read from the log, never
 * the shared slot: an entry rewritten since the replay must not hand the
 * kernel a map into the metadata or for another name.  (No second CRC
 * pass there: see famfs_fs_copy_entry.)
 */
static int item_fill(struct backend_target *t, uint32_t node, const struct famfs_log_entry *e, struct kernel_item *it,
		     struct famfs_err *err)
{
	const struct famfs_ns_node *n = famfs_ns_node(t->fs->ns, node);
	struct famfs_log_entry copy;
	int r;

	if (!n || node == FAMFS_NS_ROOT)
		return famfs_err_set(err, -ENOENT, "no namespace node %" PRIu32, node);
	if (n->path_len >= sizeof(it->path))
		return famfs_err_set(err, -ENAMETOOLONG, "\"%s\": path too long", n->path);
	memcpy(it->path, n->path, n->path_len + 1);
	it->node = node;
	it->parent = n->parent;
	it->name_off = n->name_off;
	it->dir = n->kind == FAMFS_NS_DIR;
	it->mode = it->dir ? n->mode & 07777 : file_mode(t, n->mode);
	it->uid = n->uid;
	it->gid = n->gid;
	if (it->dir)
		return 0;
	r = e ? 0 : famfs_fs_copy_entry(t->fs, node, &copy, err);
	if (r == 0)
		r = kernel_fmap_from_entry(e ? e : &copy, &it->map, err);
	if (r < 0)
		famfs_err_prefix(err, "\"%s\": ", n->path);
	return r;
}

static int instantiate_dir(struct backend_target *t, struct kstate *ks, const struct kernel_item *it,
			   struct famfs_err *err)
{
	bool owned;
	const char *name;
	struct stat st;
	int dfd, r;

	dfd = parent_fd(ks, it, &name, &owned);
	if (dfd < 0)
		return famfs_err_set(err, dfd, "\"%s\": cannot open its parent in the mount: %s", it->path,
				     strerror(-dfd));
	if (mkdirat(dfd, name, it->mode) == 0) {
		r = 0;
		if (fchownat(dfd, name, it->uid, it->gid, AT_SYMLINK_NOFOLLOW) < 0 ||
		    fchmodat(dfd, name, it->mode, 0) < 0)
			r = famfs_err_set(err, -errno, "\"%s\": cannot set owner and mode: %s", it->path,
					  strerror(errno));
		ks->st.created++;
	} else if (errno == EEXIST) {
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = famfs_err_set(err, -errno, "\"%s\": %s", it->path, strerror(errno));
		else if (!S_ISDIR(st.st_mode))
			r = conflict(t, ks, err, "\"%s\" is a directory in the log but not in the mount", it->path);
		else
			r = compare_owner(t, ks, it->path, &st, it->mode, it->uid, it->gid, err);
		if (r == 0)
			ks->st.existed++;
	} else {
		r = famfs_err_set(err, -errno, "cannot create directory \"%s\" in the mount: %s", it->path,
				  strerror(errno));
	}
	if (owned)
		close(dfd);
	return r;
}

/* An existing file: its map and its owner must be what the log says. */
static int verify_file(struct backend_target *t, struct kstate *ks, const struct kernel_item *it, struct famfs_err *err)
{
	struct famfs_ioc_get_fmap got;
	struct famfs_err e2 = {0};
	const char *rel = it->path;
	struct stat st;
	int fd, r;

	fd = open_beneath(ks->root, rel, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0);
	if (fd < 0)
		return conflict(t, ks, err, "\"%s\" is in the mount but cannot be opened: %s", rel,
				strerror(-fd));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return conflict(t, ks, err, "\"%s\" is a file in the log but not a regular file in the mount", rel);
	}
	memset(&got, 0, sizeof(got));
	if (ioctl(fd, FAMFSIOC_MAP_GET_V2, &got) < 0) {
		r = errno;
		close(fd);
		return conflict(t, ks, err, "\"%s\" is in the mount without a famfs map (%s)", rel, strerror(r));
	}
	close(fd);
	if (kernel_fmap_compare(&got, &it->map, &e2) < 0)
		return conflict(t, ks, err, "\"%s\" differs from its log entry: %s", rel, e2.msg);
	return compare_owner(t, ks, rel, &st, it->mode, it->uid, it->gid, err);
}

/* One file without MKFILES: open(O_CREAT | O_EXCL), fchown, fchmod, MAP_CREATE_V2, close. */
static int create_by_open(struct backend_target *t, struct kstate *ks, const struct kernel_item *it, int dfd,
			  const char *name, bool owned, struct famfs_err *err)
{
	bool fix_owner, fix_mode;
	int fd, r;

	fd = openat(dfd, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, it->mode);
	if (fd < 0 && errno == EEXIST) {
		r = verify_file(t, ks, it, err);
		if (r == 0)
			ks->st.existed++;
		return r;
	}
	if (fd < 0)
		return famfs_err_set(err, -errno, "cannot create \"%s\" in the mount: %s", it->path,
				     strerror(errno));
	/*
	 * A new file belongs to our euid and to the directory's gid (setgid
	 * directory) or our egid, with the mode open(2) got less the umask.
	 * Outside attach's cache, or with special bits, both are always set.
	 */
	fix_owner = owned || it->uid != ks->euid || it->gid != ks->pgid || ks->pgid == (gid_t)-1;
	fix_mode = owned || fix_owner || ks->umask < 0 || (it->mode & 07000) ||
		   (it->mode & (uint32_t)ks->umask);
	r = 0;
	if ((fix_owner && fchown(fd, it->uid, it->gid) < 0) || (fix_mode && fchmod(fd, it->mode) < 0))
		r = famfs_err_set(err, -errno, "\"%s\": cannot set owner and mode: %s", it->path, strerror(errno));
	if (r == 0 && ioctl(fd, FAMFSIOC_MAP_CREATE_V2, &it->map.fmap) < 0)
		r = famfs_err_set(err, -errno, "\"%s\": MAP_CREATE_V2 failed: %s", it->path, strerror(errno));
	close(fd);
	if (r < 0) {
		/* No file without its map stays behind. */
		(void)unlinkat(dfd, name, 0);
	} else {
		ks->st.created++;
	}
	return r;
}

/*
 * Creates the queued files in @dfd, their parent, with one MKFILES call,
 * or one at a time when the call as a whole fails.  @report: print and
 * count each failure (attach); otherwise the batch holds one file and its
 * result is returned, with @err, for the caller to count.
 */
static int mkfiles_flush(struct backend_target *t, struct kstate *ks, int dfd, bool report, struct famfs_err *err)
{
	uint32_t count = ks->batch ? kernel_mkfiles_count(ks->batch) : 0;
	const struct kernel_fmap *km;
	int call, r = 0;

	if (!ks->batch || count == 0)
		return 0;
	call = kernel_mkfiles_submit(ks->batch, dfd);
	if (call == -ENOTTY) {
		fprintf(stderr, "%s: famfs.ko has no MKFILES ioctl; creating files one at a time\n",
			t->mountpoint);
		ks->mkfiles = false;
	}
	for (uint32_t i = 0; i < count; i++) {
		const struct kernel_item *it;
		struct famfs_err e = {0};
		void *tag;

		r = kernel_mkfiles_result(ks->batch, i, &tag, &km);
		it = tag;
		if (call < 0) {
			r = create_by_open(t, ks, it, dfd, it->path + it->name_off, !report, &e);
		} else if (r == 0) {
			ks->st.created++;
		} else if (r == -EEXIST) {
			r = verify_file(t, ks, it, &e);
			if (r == 0)
				ks->st.existed++;
		} else {
			r = famfs_err_set(&e, r, "cannot create \"%s\" in the mount: MKFILES: %s", it->path,
					  strerror(-r));
		}
		if (!report) {
			*err = e;
		} else if (r < 0) {
			manager_log("%s: %s", t->mountpoint, e.msg);
			if (r != -EEXIST)
				ks->st.errors++;
		}
	}
	kernel_mkfiles_clear(ks->batch);
	return report ? 0 : r;
}

/* 1: queued for the next MKFILES call (attach); 0 or -errno: done. */
static int instantiate_file(struct backend_target *t, struct kstate *ks, struct kernel_item *it, struct famfs_err *err)
{
	const char *name;
	bool owned;
	int dfd, r;

	dfd = parent_fd(ks, it, &name, &owned);
	if (dfd < 0)
		return famfs_err_set(err, dfd, "\"%s\": cannot open its parent in the mount: %s", it->path,
				     strerror(-dfd));
	if (ks->mkfiles &&
	    kernel_mkfiles_add(ks->batch, it->parent, it, name, it->mode, it->uid, it->gid, &it->map)) {
		if (!owned)
			return 1;
		r = mkfiles_flush(t, ks, dfd, false, err);
	} else {
		r = create_by_open(t, ks, it, dfd, name, owned, err);
	}
	if (owned)
		close(dfd);
	return r;
}

/*
 * Makes @it in the mount (or, during attach, may queue it for the next
 * MKFILES call: it must then stay where it is until that batch is sent).
 */
static int instantiate_item(struct backend_target *t, struct kstate *ks, struct kernel_item *it, struct famfs_err *err)
{
	uint32_t queued = ks->batch ? kernel_mkfiles_count(ks->batch) : 0;
	int r;

	/* The queue's directory is the cached parent until parent_fd moves on. */
	if (queued && (it->dir || it->parent != kernel_mkfiles_parent(ks->batch) || queued == KERNEL_MKFILES_MAX))
		mkfiles_flush(t, ks, ks->pfd, true, NULL);
	r = it->dir ? instantiate_dir(t, ks, it, err) : instantiate_file(t, ks, it, err);
	if (r > 0)
		return 0;
	if (r < 0 && r != -EEXIST)
		ks->st.errors++;
	return r;
}

/* Makes every item in the queue, reporting failures; waits for more when @wait. */
static void consume_queue(struct backend_target *t, struct kstate *ks, bool wait)
{
	struct kernel_item *it;

	while ((it = kernel_queue_next(ks->queue, wait)) != NULL) {
		struct famfs_err e = {0};

		if (instantiate_item(t, ks, it, &e) < 0)
			manager_log("%s: %s", t->mountpoint, e.msg);
		kernel_queue_release(ks->queue, ks->batch ? kernel_mkfiles_count(ks->batch) : 0);
	}
}

/* The last batch, and the directory cache, once no more items come. */
static void consume_end(struct backend_target *t, struct kstate *ks)
{
	mkfiles_flush(t, ks, ks->pfd, true, NULL);
	kernel_queue_release(ks->queue, 0);
	parent_cache_drop(ks);
}

/*
 * The worker of an attach that overlaps the replay: it makes what the
 * replay produces, in log order, until the queue is closed.  It owns the
 * kstate's parent cache, batch and counters until it is joined.
 */
static void *instantiate_thread(void *arg)
{
	struct backend_target *t = arg;
	struct kstate *ks = t->data;

	consume_queue(t, ks, true);
	consume_end(t, ks);
	return NULL;
}

/* Fills the next free slot of the queue with @node and publishes it. */
static int queue_node(struct backend_target *t, struct kstate *ks, uint32_t node, const struct famfs_log_entry *e,
		      struct famfs_err *err)
{
	struct kernel_item *it = kernel_queue_reserve(ks->queue);
	int r;

	if (!it)
		return famfs_err_set(err, -ENOBUFS, "the instantiation queue is full or closed");
	r = item_fill(t, node, e, it, err);
	if (r == 0)
		kernel_queue_commit(ks->queue);
	return r;
}

/* Outside attach: @node is made right away, with its result returned. */
static int do_instantiate(struct backend_target *t, struct kstate *ks, uint32_t node, const struct famfs_log_entry *e,
			  struct famfs_err *err)
{
	struct kernel_item it;
	int r;

	r = item_fill(t, node, e, &it, err);
	if (r < 0) {
		ks->st.errors++;
		return r;
	}
	return instantiate_item(t, ks, &it, err);
}

/* ---- the adopt record ---------------------------------------------------- */

static int mount_identity(struct kstate *ks, uint64_t *mnt_id, uint64_t *dev)
{
	struct statx stx;

	if (statx(ks->root, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_INO | STATX_MNT_ID, &stx) < 0)
		return -errno;
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -EOPNOTSUPP;
	*mnt_id = stx.stx_mnt_id;
	*dev = ((uint64_t)stx.stx_dev_major << 32) | stx.stx_dev_minor;
	return 0;
}

/* The inode and ctime of directory @node in the mount, now. */
static int dir_now(struct backend_target *t, struct kstate *ks, uint32_t node, struct kstate_dir *ret)
{
	const struct famfs_ns_node *n = famfs_ns_node(t->fs->ns, node);
	struct stat st;
	int fd, r;

	if (!n || (node != FAMFS_NS_ROOT && n->kind != FAMFS_NS_DIR))
		return -ENOTDIR;
	if (node == FAMFS_NS_ROOT) {
		r = fstat(ks->root, &st);
	} else {
		fd = open_beneath(ks->root, n->path, O_PATH | O_DIRECTORY, 0);
		if (fd < 0)
			return fd;
		r = fstat(fd, &st);
		close(fd);
	}
	if (r < 0)
		return -errno;
	memset(ret, 0, sizeof(*ret));
	ret->node = node;
	ret->ino = st.st_ino;
	ret->ctime_sec = st.st_ctim.tv_sec;
	ret->ctime_nsec = st.st_ctim.tv_nsec;
	return 0;
}

static void state_write(struct kstate *ks)
{
	size_t n = (size_t)ks->sh.ndirs * sizeof(ks->dirs[0]);

	if (ks->state_fd < 0)
		return;
	if (pwrite(ks->state_fd, &ks->sh, sizeof(ks->sh), 0) != (ssize_t)sizeof(ks->sh) ||
	    (n && pwrite(ks->state_fd, ks->dirs, n, sizeof(ks->sh)) != (ssize_t)n) ||
	    ftruncate(ks->state_fd, (off_t)(sizeof(ks->sh) + n)) < 0) {
		/* Without a record the next adopt verifies every file. */
		(void)unlink(ks->state_path);
		close(ks->state_fd);
		ks->state_fd = -1;
	}
}

static void state_distrust(struct kstate *ks)
{
	if (ks->state_fd >= 0 && ks->sh.nodes_done) {
		ks->sh.nodes_done = 0;
		state_write(ks);
	}
}

static int state_add_dir(struct backend_target *t, struct kstate *ks, uint32_t node)
{
	if (ks->sh.ndirs == ks->dirs_cap) {
		uint32_t cap = ks->dirs_cap ? ks->dirs_cap * 2 : 16;
		struct kstate_dir *d;

		if (cap > KERNEL_STATE_MAX_DIRS)
			return -E2BIG;
		d = realloc(ks->dirs, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		ks->dirs = d;
		ks->dirs_cap = cap;
	}
	if (dir_now(t, ks, node, &ks->dirs[ks->sh.ndirs]) < 0)
		return -EIO;
	ks->sh.ndirs++;
	return 0;
}

/* Records the mount as it is now: nodes [0, @nodes_done) match the log. */
static void state_record(struct backend_target *t, struct kstate *ks, uint32_t nodes_done)
{
	const struct famfs_ns_node *n;

	if (ks->state_fd < 0)
		return;
	memset(&ks->sh, 0, sizeof(ks->sh));
	memcpy(ks->sh.magic, KERNEL_STATE_MAGIC, sizeof(ks->sh.magic));
	memcpy(ks->sh.uuid, t->fs->sb->uuid, sizeof(ks->sh.uuid));
	if (mount_identity(ks, &ks->sh.mnt_id, &ks->sh.dev) < 0 || state_add_dir(t, ks, FAMFS_NS_ROOT) < 0)
		nodes_done = 0;
	for (uint32_t id = 1; nodes_done && id < nodes_done && (n = famfs_ns_node(t->fs->ns, id)); id++)
		if (n->kind == FAMFS_NS_DIR && state_add_dir(t, ks, id) < 0)
			nodes_done = 0;
	if (!nodes_done)
		ks->sh.ndirs = 0;
	ks->sh.nodes_done = nodes_done;
	state_write(ks);
}

static void state_open(struct backend_target *t, struct kstate *ks)
{
	if (!t->uuid[0] || (mkdir(KERNEL_STATE_DIR, 0700) < 0 && errno != EEXIST))
		return;
	snprintf(ks->state_path, sizeof(ks->state_path), "%s/kernel-%s.state", KERNEL_STATE_DIR, t->uuid);
	ks->state_fd = open(ks->state_path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
}

/*
 * Whether the record was written for this very mount (same file system,
 * mount id and device): then an earlier run of the daemon mounted it, and
 * this one unmounts it at detach and shutdown as if it had.  A famfs mount
 * someone else made has no such record and is left alone.
 */
static bool state_names_this_mount(struct backend_target *t, struct kstate *ks)
{
	struct kstate_hdr h;
	uint64_t mnt_id, dev;

	if (ks->state_fd < 0 || pread(ks->state_fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return false;
	return memcmp(h.magic, KERNEL_STATE_MAGIC, sizeof(h.magic)) == 0 &&
	       memcmp(h.uuid, t->fs->sb->uuid, sizeof(h.uuid)) == 0 &&
	       mount_identity(ks, &mnt_id, &dev) == 0 && mnt_id == h.mnt_id && dev == h.dev;
}

/*
 * On an adopted mount: how many nodes (from 0) the record lets us trust,
 * 0 when the record is missing, from another mount, or any of its
 * directories changed.
 */
static uint32_t state_trusted(struct backend_target *t, struct kstate *ks, uint32_t nnodes)
{
	struct kstate_hdr h;
	struct kstate_dir *d, now;
	const struct famfs_ns_node *n;
	uint64_t mnt_id, dev;
	uint32_t ndirs = 1, ok = 0;
	size_t len;

	if (ks->state_fd < 0 || pread(ks->state_fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return 0;
	if (memcmp(h.magic, KERNEL_STATE_MAGIC, sizeof(h.magic)) != 0 || h.nodes_done < 2 ||
	    h.nodes_done > nnodes || h.ndirs < 1 || h.ndirs > KERNEL_STATE_MAX_DIRS ||
	    memcmp(h.uuid, t->fs->sb->uuid, sizeof(h.uuid)) != 0 ||
	    mount_identity(ks, &mnt_id, &dev) < 0 || mnt_id != h.mnt_id || dev != h.dev)
		return 0;
	for (uint32_t id = 1; id < h.nodes_done; id++) {
		n = famfs_ns_node(t->fs->ns, id);
		if (!n)
			return 0;
		ndirs += n->kind == FAMFS_NS_DIR;
	}
	if (ndirs != h.ndirs)
		return 0;
	len = (size_t)h.ndirs * sizeof(*d);
	d = malloc(len);
	if (!d)
		return 0;
	if (pread(ks->state_fd, d, len, sizeof(h)) != (ssize_t)len)
		goto out;
	/* Records in node order, root first: each directory once. */
	for (uint32_t i = 0; i < h.ndirs; i++) {
		if (d[i].node >= h.nodes_done || (i == 0) != (d[i].node == FAMFS_NS_ROOT) ||
		    (i > 0 && d[i].node <= d[i - 1].node) || dir_now(t, ks, d[i].node, &now) < 0 ||
		    now.ino != d[i].ino || now.ctime_sec != d[i].ctime_sec || now.ctime_nsec != d[i].ctime_nsec)
			goto out;
	}
	ok = h.nodes_done;
out:
	free(d);
	return ok;
}

static struct kstate_dir *state_find_dir(struct kstate *ks, uint32_t node)
{
	for (uint32_t i = 0; i < ks->sh.ndirs; i++)
		if (ks->dirs[i].node == node)
			return &ks->dirs[i];
	return NULL;
}

static int kernel_instantiate(struct backend_target *t, uint32_t node, const struct famfs_log_entry *e,
			      struct famfs_err *err)
{
	struct kstate *ks = t->data;
	const struct famfs_ns_node *n;
	struct kstate_dir *pd, now;
	bool track;
	int r;

	if (!ks)
		return 0;
	n = famfs_ns_node(t->fs->ns, node);
	if (!n || node == FAMFS_NS_ROOT)
		return 0;
	if (ks->streaming) {
		/* The replay at attach: the worker makes it. */
		r = queue_node(t, ks, node, e, err);
		if (r < 0)
			ks->fill_errors++;
		return r;
	}
	/* Before the mount is ready, attach instantiates the whole namespace. */
	if (!ks->ready)
		return 0;
	/* The record stays trusted only when this is the next node and its
	 * directory is as we left it. */
	pd = state_find_dir(ks, n->parent);
	track = ks->state_fd >= 0 && ks->sh.nodes_done == node && pd &&
		dir_now(t, ks, n->parent, &now) == 0 && now.ino == pd->ino &&
		now.ctime_sec == pd->ctime_sec && now.ctime_nsec == pd->ctime_nsec;
	r = do_instantiate(t, ks, node, e, err);
	if (!track || r < 0 || dir_now(t, ks, n->parent, pd) < 0 ||
	    (n->kind == FAMFS_NS_DIR && state_add_dir(t, ks, node) < 0)) {
		state_distrust(ks);
		return r;
	}
	ks->sh.nodes_done = node + 1;
	state_write(ks);
	return r;
}

/* ---- .meta ------------------------------------------------------------- */

static int make_meta_file(struct backend_target *t, struct kstate *ks, const char *rel, uint32_t type,
			  uint64_t offset, uint64_t len, mode_t mode, struct famfs_err *err)
{
	struct famfs_ioc_get_fmap got;
	struct kernel_fmap km;
	struct famfs_err e2 = {0};
	int fd, r = 0;

	kernel_fmap_meta(type, offset, len, &km);
	fd = open_beneath(ks->root, rel, O_RDONLY | O_CREAT | O_EXCL | O_NOCTTY, mode);
	if (fd >= 0) {
		if (fchmod(fd, mode) < 0 || ioctl(fd, FAMFSIOC_MAP_CREATE_V2, &km.fmap) < 0) {
			r = famfs_err_set(err, -errno, "cannot create %s: MAP_CREATE_V2: %s", rel, strerror(errno));
			close(fd);
			fd = open_beneath(ks->root, ".meta", O_PATH | O_DIRECTORY, 0);
			if (fd >= 0) {
				(void)unlinkat(fd, strchr(rel, '/') + 1, 0);
				close(fd);
			}
			return r;
		}
		close(fd);
		return 0;
	}
	if (fd != -EEXIST)
		return famfs_err_set(err, fd, "cannot create %s in %s: %s", rel, t->mountpoint, strerror(-fd));
	fd = open_beneath(ks->root, rel, O_RDONLY | O_NOCTTY, 0);
	if (fd < 0)
		return famfs_err_set(err, fd, "cannot open %s: %s", rel, strerror(-fd));
	memset(&got, 0, sizeof(got));
	if (ioctl(fd, FAMFSIOC_MAP_GET_V2, &got) < 0)
		r = famfs_err_set(err, -errno, "%s exists without a famfs map: %s", rel, strerror(errno));
	else if (kernel_fmap_compare(&got, &km, &e2) < 0)
		r = famfs_err_set(err, -EEXIST, "%s is not this file system's: %s", rel, e2.msg);
	close(fd);
	return r;
}

static int make_meta(struct backend_target *t, struct kstate *ks, struct famfs_err *err)
{
	int dfd, r;

	dfd = open_beneath(ks->root, ".", O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return famfs_err_set(err, dfd, "cannot open %s: %s", t->mountpoint, strerror(-dfd));
	if (mkdirat(dfd, ".meta", 0700) < 0 && errno != EEXIST) {
		r = -errno;
		close(dfd);
		return famfs_err_set(err, r, "cannot create %s/.meta: %s", t->mountpoint, strerror(-r));
	}
	close(dfd);
	r = make_meta_file(t, ks, ".meta/.superblock", FAMFS_SUPERBLOCK, 0, FAMFS_SUPERBLOCK_SIZE, 0444, err);
	if (r < 0)
		return r;
	return make_meta_file(t, ks, ".meta/.log", FAMFS_LOG, FAMFS_LOG_OFFSET, t->fs->layout.log_len,
			      t->fs->master ? 0644 : 0444, err);
}

/*
 * Reads and appends go through the .meta files' DAX mappings from now on.
 * The two are mapped side by side as on the medium (the log right after
 * the 2 MiB superblock region), from a 2 MiB boundary so that faults map
 * whole PMDs.  The checks read this view (kernel_medium_view) rather than
 * the device mapping, whose page cache the DAX writes never reach.
 */
static int switch_to_meta(struct backend_target *t, struct kstate *ks, struct famfs_err *err)
{
	int prot = t->fs->master && t->fs->dev->writable ? PROT_READ | PROT_WRITE : PROT_READ;
	const size_t align = 2u << 20;
	size_t log_len = t->fs->layout.log_len, span = FAMFS_LOG_OFFSET + log_len;
	struct famfs_superblock *sb;
	struct famfs_log_header *lh;
	uint8_t *res, *view;
	void *p;
	int fd;

	res = mmap(NULL, span + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		return famfs_err_set(err, -errno, "cannot reserve %zu bytes for the .meta files: %s", span,
				     strerror(errno));
	view = (uint8_t *)(((uintptr_t)res + align - 1) & ~(uintptr_t)(align - 1));
	if (view > res)
		munmap(res, (size_t)(view - res));
	munmap(view + span, (size_t)(res + span + align - (view + span)));
	ks->view = view;
	ks->view_len = span;
	/* The device can go while mounted: the .meta mappings then fault. */
	(void)medium_guard_add(view, span);
	fd = open_beneath(ks->root, ".meta/.superblock", O_RDONLY | O_NOCTTY, 0);
	if (fd < 0)
		return famfs_err_set(err, fd, "cannot open .meta/.superblock: %s", strerror(-fd));
	p = mmap(view, FAMFS_SUPERBLOCK_SIZE, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return famfs_err_set(err, -errno, "cannot map .meta/.superblock: %s", strerror(errno));
	fd = open_beneath(ks->root, ".meta/.log", (prot & PROT_WRITE) ? O_RDWR : O_RDONLY, 0);
	if (fd < 0)
		return famfs_err_set(err, fd, "cannot open .meta/.log: %s", strerror(-fd));
	p = mmap(view + FAMFS_LOG_OFFSET, log_len, prot, MAP_SHARED | MAP_FIXED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return famfs_err_set(err, -errno, "cannot map .meta/.log: %s", strerror(errno));
	sb = (struct famfs_superblock *)view;
	lh = (struct famfs_log_header *)(view + FAMFS_LOG_OFFSET);
	if (sb->magic != t->fs->sb->magic || memcmp(sb->uuid, t->fs->sb->uuid, 16) != 0 ||
	    lh->magic != t->fs->log->magic || lh->len != t->fs->log->len ||
	    lh->last_index != t->fs->log->last_index)
		return famfs_err_set(err, -EILSEQ,
				     "the mount's .meta files do not show the superblock and log read from %s",
				     t->device);
	ks->dev_sb = t->fs->sb;
	ks->dev_log = t->fs->log;
	t->fs->sb = sb;
	t->fs->log = lh;
	return 0;
}

/* ---- attach / detach --------------------------------------------------- */

/* Waits for the worker of a streaming attach, if one runs. */
static void stop_streaming(struct backend_target *t, struct kstate *ks)
{
	if (!ks->streaming)
		return;
	kernel_queue_close(ks->queue);
	pthread_join(ks->worker, NULL);
	ks->streaming = false;
	ks->st.errors += ks->fill_errors;
}

static void release(struct backend_target *t, struct kstate *ks)
{
	stop_streaming(t, ks);
	if (ks->dev_sb) {
		t->fs->sb = ks->dev_sb;
		t->fs->log = ks->dev_log;
	}
	if (ks->view) {
		medium_guard_remove(ks->view);
		munmap(ks->view, ks->view_len);
	}
	parent_cache_drop(ks);
	if (ks->state_fd >= 0) {
		/* The record describes a mount; ours goes away. */
		if (ks->mounted)
			(void)unlink(ks->state_path);
		close(ks->state_fd);
	}
	free(ks->dirs);
	kernel_mkfiles_free(ks->batch);
	kernel_queue_free(ks->queue);
	if (ks->root >= 0)
		close(ks->root);
	if (ks->mounted && umount2(t->mountpoint, 0) < 0) {
		fprintf(stderr, "%s: cannot unmount (%s); detaching it lazily\n", t->mountpoint, strerror(errno));
		(void)umount2(t->mountpoint, MNT_DETACH);
	}
	free(ks);
	t->data = NULL;
}

/*
 * Before the replay at attach: mount (or adopt the mount already there),
 * make the .meta files and read the log through them from now on.  On a
 * mount of our own, which holds nothing yet, a worker then makes each node
 * as the replay produces it, so the replay and the file creation overlap;
 * kernel_attach waits for it.  An adopted mount is compared with its
 * record once the whole log is known, in kernel_attach.
 */
static int kernel_prepare(struct backend_target *t, struct famfs_err *err)
{
	struct kstate *ks;
	uint64_t t0 = mono_usec();
	int r;

	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return famfs_err_set(err, -ENOMEM, "out of memory");
	ks->root = -1;
	ks->pfd = -1;
	ks->state_fd = -1;
	ks->batch = kernel_mkfiles_new();
	ks->mkfiles = ks->batch != NULL;
	t->data = ks;
	if (!t->mountpoint || t->mountpoint[0] != '/') {
		r = famfs_err_set(err, -EINVAL, "no mount point");
		goto fail;
	}
	r = mkdir_p(t->mountpoint, 0755);
	if (r < 0) {
		famfs_err_set(err, r, "cannot create %s: %s", t->mountpoint, strerror(-r));
		goto fail;
	}
	ks->root = open(t->mountpoint, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ks->root < 0) {
		r = famfs_err_set(err, -errno, "cannot open %s: %s", t->mountpoint, strerror(errno));
		goto fail;
	}
	if (is_famfs_dir(ks->root)) {
		/* The daemon restarted: the mount is ours from before. */
		ks->st.adopted = true;
	} else {
		close(ks->root);
		ks->root = -1;
		if (mount(t->device, t->mountpoint, "famfs", KERNEL_MOUNT_FLAGS, "") < 0) {
			r = famfs_err_set(err, -errno, "mount -t famfs %s %s: %s", t->device, t->mountpoint,
					  strerror(errno));
			goto fail;
		}
		ks->mounted = true;
		ks->root = open(t->mountpoint, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (ks->root < 0 || !is_famfs_dir(ks->root)) {
			r = famfs_err_set(err, ks->root < 0 ? -errno : -EXDEV,
					  "%s is not a famfs mount after mounting it", t->mountpoint);
			goto fail;
		}
	}
	r = make_meta(t, ks, err);
	if (r < 0)
		goto fail;
	r = switch_to_meta(t, ks, err);
	if (r < 0)
		goto fail;
	enable_fault_counting();
	ks->t_prepared = mono_usec();
	ks->st.mount_usec = ks->t_prepared - t0;
	ks->euid = geteuid();
	ks->umask = read_umask();
	state_open(t, ks);
	if (ks->st.adopted && state_names_this_mount(t, ks))
		ks->mounted = true;
	ks->caching = true;
	if (!ks->st.adopted && sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
		ks->queue = kernel_queue_new(true);
		if (ks->queue && pthread_create(&ks->worker, NULL, instantiate_thread, t) == 0) {
			ks->streaming = true;
			return 0;
		}
		kernel_queue_free(ks->queue);
	}
	ks->queue = kernel_queue_new(false);
	if (!ks->queue) {
		r = famfs_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	return 0;
fail:
	release(t, ks);
	return r;
}

/* After the replay; kernel_prepare succeeded before it. */
static int kernel_attach(struct backend_target *t, struct famfs_err *err)
{
	struct kstate *ks = t->data;
	uint32_t nnodes = 0, first = 1;
	uint64_t t_replayed = mono_usec(), t_start;
	bool overlapped;

	if (!ks)
		return famfs_err_set(err, -EINVAL, "attach without prepare");
	/* Streaming, the instantiation began with the replay. */
	overlapped = ks->streaming;
	t_start = overlapped ? ks->t_prepared : t_replayed;
	/* Node ids grow in log order, so parents come before their children. */
	while (famfs_ns_node(t->fs->ns, nnodes))
		nnodes++;
	if (overlapped) {
		stop_streaming(t, ks);
	} else {
		if (ks->st.adopted) {
			ks->trusted = state_trusted(t, ks, nnodes);
			if (ks->trusted > 1) {
				/* Nodes [1, trusted) are in the mount as the log says. */
				first = ks->trusted;
				ks->st.existed += ks->trusted - 1;
			}
		}
		for (uint32_t id = first; id < nnodes; id++) {
			struct famfs_err e2 = {0};

			if (queue_node(t, ks, id, NULL, &e2) < 0) {
				manager_log("%s: %s", t->mountpoint, e2.msg);
				ks->st.errors++;
				continue;
			}
			consume_queue(t, ks, false);
		}
		consume_end(t, ks);
	}
	state_record(t, ks, ks->st.conflicts || ks->st.errors ? 0 : nnodes);
	ks->st.replay_usec = mono_usec() - t_start;
	ks->ready = true;
	fprintf(stderr, "%s: famfs %s %s in %" PRIu64 " ms: %" PRIu64 " made, %" PRIu64
		" already there, %" PRIu64 " conflicts, %" PRIu64 " errors (instantiated in %" PRIu64
		" us; %" PRIu32 " trusted from the previous attach's record)\n",
		t->mountpoint, ks->st.adopted ? "mount adopted" : "mounted", t->device,
		(mono_usec() - ks->t_prepared + ks->st.mount_usec) / 1000, ks->st.created, ks->st.existed,
		ks->st.conflicts, ks->st.errors, ks->st.replay_usec,
		ks->trusted > 1 ? ks->trusted - 1 : 0);
	if (overlapped)
		fprintf(stderr, "%s: the instantiation ran alongside the replay, which took %" PRIu64
			" us of it\n", t->mountpoint, t_replayed - ks->t_prepared);
	return 0;
}

static void kernel_detach(struct backend_target *t)
{
	struct kstate *ks = t->data;

	if (ks)
		release(t, ks);
}

static int kernel_open_data(struct backend_target *t, uint32_t node, bool writable, int *ret_fd,
			    struct famfs_err *err)
{
	struct kstate *ks = t->data;
	const struct famfs_ns_node *n = famfs_ns_node(t->fs->ns, node);
	int fd;

	if (!ks || !ks->ready || !n)
		return famfs_err_set(err, -ENODEV, "%s is not mounted", t->mountpoint);
	if (writable && !t->fs->master)
		return famfs_err_set(err, -EROFS, "\"%s\": clients do not write", n->path);
	fd = open_beneath(ks->root, n->path, (writable ? O_RDWR : O_RDONLY) | O_NOCTTY, 0);
	if (fd < 0)
		return famfs_err_set(err, fd, "cannot open %s/%s: %s", t->mountpoint, n->path, strerror(-fd));
	*ret_fd = fd;
	return 0;
}

static const uint8_t *kernel_medium_view(struct backend_target *t, uint64_t *readable)
{
	const struct kstate *ks = t->data;

	/* Only once the library reads through it too (switch_to_meta done). */
	if (!ks || !ks->dev_sb)
		return NULL;
	*readable = ks->view_len;
	return ks->view;
}

int kernel_module_fault_counters(uint64_t ret[3])
{
	int r = kernel_read_fault_counters(KERNEL_SYSFS_DIR, ret);

	if (r < 0)
		ret[0] = ret[1] = ret[2] = 0;
	return r;
}

int kernel_stats_get(const struct backend_target *t, struct kernel_stats *ret)
{
	const struct kstate *ks = t->ops != &backend_kernel ? NULL : t->data;

	if (!ks)
		return -ENODEV;
	*ret = ks->st;
	return 0;
}

/* ---- check ------------------------------------------------------------- */

struct walk {
	struct backend_target *t;
	kernel_check_fn fn;
	void *userdata;
	uint8_t *seen;       /* one byte per namespace node */
	uint32_t nnodes;
	int problems;
};

__attribute__((format(printf, 5, 6)))
static void problem(struct walk *w, const char *code, int64_t index, const char *rel, const char *fmt, ...)
{
	char msg[FAMFS_ERR_MSG_MAX];
	va_list ap;

	int n = snprintf(msg, sizeof(msg), "\"%s\": ", rel);

	if (n < 0 || (size_t)n >= sizeof(msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	w->problems++;
	if (w->fn)
		w->fn(w->userdata, code, index, rel, msg);
}

static void check_file(struct walk *w, int fd, const char *rel, uint32_t id)
{
	const struct famfs_ns_node *n = famfs_ns_node(w->t->fs->ns, id);
	struct famfs_ioc_get_fmap got;
	struct famfs_log_entry e;
	struct famfs_err e2 = {0};
	struct kernel_fmap km;

	if (famfs_fs_read_entry(w->t->fs, id, &e, &e2) < 0 || kernel_fmap_from_entry(&e, &km, &e2) < 0) {
		problem(w, "mount-bad-entry", n->index, rel, "its log entry cannot be mapped: %s", e2.msg);
		return;
	}
	memset(&got, 0, sizeof(got));
	if (ioctl(fd, FAMFSIOC_MAP_GET_V2, &got) < 0) {
		problem(w, "mount-unmapped", n->index, rel, "the file in the mount has no famfs map: %s",
			strerror(errno));
		return;
	}
	if (kernel_fmap_compare(&got, &km, &e2) < 0)
		problem(w, "mount-map-differs", n->index, rel, "the file's map differs from its log entry: %s",
			e2.msg);
}

static void walk_dir(struct walk *w, int dfd, const char *prefix, int depth)
{
	struct dirent *de;
	DIR *d;

	if (depth > KERNEL_MAX_DEPTH) {
		problem(w, "mount-too-deep", -1, prefix, "directories nest deeper than %d", KERNEL_MAX_DEPTH);
		close(dfd);
		return;
	}
	d = fdopendir(dfd);
	if (!d) {
		problem(w, "mount-unreadable", -1, prefix, "cannot read the directory: %s", strerror(errno));
		close(dfd);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		char rel[FAMFS_MAX_PATHLEN + 256];
		struct stat st;
		uint32_t id;
		int n, fd;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!prefix[0] && !strcmp(de->d_name, ".meta"))
			continue;
		n = snprintf(rel, sizeof(rel), "%s%s%s", prefix, prefix[0] ? "/" : "", de->d_name);
		if (n < 0 || (size_t)n >= sizeof(rel))
			continue;
		id = famfs_ns_lookup(w->t->fs->ns, rel, (size_t)n);
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			problem(w, "mount-unreadable", -1, rel, "cannot stat: %s", strerror(errno));
			continue;
		}
		if (id == FAMFS_NS_NONE) {
			problem(w, "mount-unknown", -1, rel, "%s in the mount that the log does not know",
				S_ISDIR(st.st_mode) ? "a directory" : S_ISREG(st.st_mode) ? "a file" : "an object");
			continue;
		}
		if (id < w->nnodes)
			w->seen[id] = 1;
		if (S_ISDIR(st.st_mode) != (famfs_ns_node(w->t->fs->ns, id)->kind == FAMFS_NS_DIR)) {
			problem(w, "mount-type-differs", famfs_ns_node(w->t->fs->ns, id)->index, rel,
				"is a %s in the mount and a %s in the log", S_ISDIR(st.st_mode) ? "directory" : "file",
				S_ISDIR(st.st_mode) ? "file" : "directory");
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				problem(w, "mount-unreadable", -1, rel, "cannot open: %s", strerror(errno));
			else
				walk_dir(w, fd, rel, depth + 1);
			continue;
		}
		if (!S_ISREG(st.st_mode)) {
			problem(w, "mount-type-differs", famfs_ns_node(w->t->fs->ns, id)->index, rel,
				"is neither a file nor a directory in the mount");
			continue;
		}
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd < 0) {
			problem(w, "mount-unreadable", -1, rel, "cannot open: %s", strerror(errno));
			continue;
		}
		check_file(w, fd, rel, id);
		close(fd);
	}
	closedir(d);
}

int kernel_check_mount(struct backend_target *t, kernel_check_fn fn, void *userdata, struct famfs_err *err)
{
	struct kstate *ks = t->ops == &backend_kernel ? t->data : NULL;
	struct walk w = { .t = t, .fn = fn, .userdata = userdata };
	const struct famfs_ns_node *n;
	struct famfs_err e2 = {0};
	int fd;

	if (!ks || !ks->ready || !t->fs)
		return famfs_err_set(err, -ENODEV, "%s is not mounted by the kernel backend",
				     t->mountpoint ? t->mountpoint : t->device);
	while (famfs_ns_node(t->fs->ns, w.nnodes) && w.nnodes < KERNEL_CHECK_MAX_NODES)
		w.nnodes++;
	w.seen = calloc(w.nnodes ? w.nnodes : 1, 1);
	if (!w.seen)
		return famfs_err_set(err, -ENOMEM, "out of memory");
	if (make_meta_file(t, ks, ".meta/.superblock", FAMFS_SUPERBLOCK, 0, FAMFS_SUPERBLOCK_SIZE, 0444, &e2) < 0)
		problem(&w, "mount-meta", -1, ".meta/.superblock", "%s", e2.msg);
	memset(&e2, 0, sizeof(e2));
	if (make_meta_file(t, ks, ".meta/.log", FAMFS_LOG, FAMFS_LOG_OFFSET, t->fs->layout.log_len,
			   t->fs->master ? 0644 : 0444, &e2) < 0)
		problem(&w, "mount-meta", -1, ".meta/.log", "%s", e2.msg);
	fd = open_beneath(ks->root, ".", O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0) {
		free(w.seen);
		return famfs_err_set(err, fd, "cannot open %s: %s", t->mountpoint, strerror(-fd));
	}
	walk_dir(&w, fd, "", 0);
	for (uint32_t id = 1; id < w.nnodes; id++) {
		n = famfs_ns_node(t->fs->ns, id);
		if (!w.seen[id])
			problem(&w, "mount-missing", n->index, n->path, "the log has this %s; the mount does not",
				n->kind == FAMFS_NS_DIR ? "directory" : "file");
	}
	free(w.seen);
	return w.problems;
}

const struct backend_ops backend_kernel = {
	.name = "kernel",
	.prepare = kernel_prepare,
	.attach = kernel_attach,
	.instantiate = kernel_instantiate,
	.open_data = kernel_open_data,
	.medium_view = kernel_medium_view,
	.media_error = kernel_mount_media_error,
	.detach = kernel_detach,
	.data_fd_is_file = true,
};
