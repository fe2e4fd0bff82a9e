// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Making the namespace the log describes in the mount: directories with
 * their mode and owner, files in batches of siblings with famfs.ko's
 * MKFILES ioctl (kernel-mkfiles.c) or, with a module that lacks it, one at
 * a time with open(O_CREAT), fchown and MAP_CREATE_V2.  Clients get no
 * write bits.  A path that is already there is compared with its log
 * entry; a difference is a conflict, reported, never papered over.
 *
 * At attach the nodes come through a queue (kernel-queue.c) in log order:
 * on a fresh mount a worker thread makes each one as the replay produces
 * it; on an adopted one the whole namespace is queued after the replay.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "kernel-instantiate.h"
#include "kernel-mount.h"
#include "logging.h"

struct kernel_maker {
	struct backend_target *t;
	int root;
	uint64_t created;         /* see struct kernel_stats */
	uint64_t existed;
	uint64_t conflicts;
	uint64_t errors;
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
	/* files queued for MKFILES; mkfiles false once the module said ENOTTY */
	struct kernel_mkfiles *batch;
	bool mkfiles;
	/* What attach is to make, in log order; with a worker, the replay fills it. */
	struct kernel_queue *queue;
	pthread_t worker;
	bool streaming;           /* the worker runs and owns all above until joined */
	uint64_t worker_cpu_usec; /* the worker's CPU time, once joined */
	uint64_t fill_errors;     /* nodes the replay could not queue */
};

/* The process umask, from /proc/self/status (umask(2) would change it); -1 if unknown. */
static int read_umask(void)
{
	_cleanup_fclose_ FILE *fp = fopen("/proc/self/status", "re");
	char line[128];

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		if (strncmp(line, "Umask:", 6) == 0)
			return (int)strtol(line + 6, NULL, 8);
	return -1;
}

struct kernel_maker *kernel_maker_new(struct backend_target *t, int root)
{
	struct kernel_maker *mk = calloc(1, sizeof(*mk));

	if (!mk)
		return NULL;
	mk->t = t;
	mk->root = root;
	mk->pfd = -1;
	mk->caching = true;
	mk->euid = geteuid();
	mk->umask = read_umask();
	mk->batch = kernel_mkfiles_new();
	mk->mkfiles = mk->batch != NULL;
	return mk;
}

static void parent_cache_drop(struct kernel_maker *mk)
{
	if (mk->pfd >= 0)
		close(TAKE_FD(mk->pfd));
	mk->caching = false;
}

struct kernel_maker *kernel_maker_free(struct kernel_maker *mk)
{
	if (!mk)
		return NULL;
	kernel_maker_stop(mk);
	parent_cache_drop(mk);
	kernel_mkfiles_free(mk->batch);
	kernel_queue_free(mk->queue);
	free(mk);
	return NULL;
}

static uint32_t file_mode(const struct kernel_maker *mk, uint32_t mode)
{
	mode &= 07777;
	return famfs_fs_is_master(mk->t->fs) ? mode : mode & ~0222u;
}

__attribute__((format(printf, 3, 4)))
static int conflict(struct kernel_maker *mk, struct famfs_err *err, const char *fmt, ...)
{
	char msg[FAMFS_ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	mk->conflicts++;
	return famfs_err_set(err, -EEXIST, "%s", msg);
}

static int compare_owner(struct kernel_maker *mk, const char *rel, const struct stat *st, uint32_t mode,
			 uint32_t uid, uint32_t gid, struct famfs_err *err)
{
	if ((st->st_mode & 07777) != mode || st->st_uid != uid || st->st_gid != gid)
		return conflict(mk, err,
				"\"%s\" is in the mount with mode %04o owner %u:%u, the log says %04o %u:%u",
				rel, (unsigned)(st->st_mode & 07777), (unsigned)st->st_uid,
				(unsigned)st->st_gid, mode, uid, gid);
	return 0;
}

/* The directory holding @rel (readable: MKFILES is its ioctl), and the last component of @rel. */
static int open_parent(int root, const char *rel, const char **ret_name)
{
	const char *slash = strrchr(rel, '/');
	char dir[FAMFS_MAX_PATHLEN];
	size_t n;

	if (!slash) {
		*ret_name = rel;
		return kernel_open_beneath(root, ".", O_RDONLY | O_DIRECTORY, 0);
	}
	n = (size_t)(slash - rel);
	if (n == 0 || n >= sizeof(dir))
		return -EINVAL;
	memcpy(dir, rel, n);
	dir[n] = '\0';
	*ret_name = slash + 1;
	return kernel_open_beneath(root, dir, O_RDONLY | O_DIRECTORY, 0);
}

/*
 * The directory that holds @it, and the last component of its path.  During
 * attach the descriptor is kept for the next sibling; otherwise it is also
 * stored in *ret_owned_fd, for the caller to close.
 */
static int parent_fd(struct kernel_maker *mk, const struct kernel_item *it, const char **name, int *ret_owned_fd,
		     struct famfs_err *err)
{
	struct stat st;
	int dfd;

	if (mk->caching && mk->pfd >= 0 && mk->pnode == it->parent) {
		*name = it->path + it->name_off;
		return mk->pfd;
	}
	dfd = open_parent(mk->root, it->path, name);
	if (dfd < 0)
		return famfs_err_set(err, dfd, "\"%s\": cannot open its parent in the mount: %s", it->path,
				     strerror(-dfd));
	if (!mk->caching) {
		*ret_owned_fd = dfd;
		return dfd;
	}
	if (mk->pfd >= 0)
		close(mk->pfd);
	mk->pfd = dfd;
	mk->pnode = it->parent;
	mk->pgid = (gid_t)-1;
	if (fstat(dfd, &st) == 0)
		mk->pgid = (st.st_mode & S_ISGID) ? st.st_gid : getegid();
	return dfd;
}

/*
 * What the mount is to get for @node: its path, mode, owner and, for a
 * file, its map, all by value.  @e is the entry as the replay validated
 * it; without one, a re-checked private copy is read from the log, never
 * the shared slot: an entry rewritten since the replay must not hand the
 * kernel a map into the metadata or for another name.  (No second CRC
 * pass there: see famfs_fs_copy_entry.)
 */
static int item_fill(struct kernel_maker *mk, uint32_t node, const struct famfs_log_entry *e,
		     struct kernel_item *it, struct famfs_err *err)
{
	const struct famfs_ns_node *n = famfs_ns_node(famfs_fs_namespace(mk->t->fs), node);
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
	it->mode = it->dir ? n->mode & 07777 : file_mode(mk, n->mode);
	it->uid = n->uid;
	it->gid = n->gid;
	if (it->dir)
		return 0;
	r = e ? 0 : famfs_fs_copy_entry(mk->t->fs, node, &copy, err);
	if (r == 0)
		r = kernel_fmap_from_entry(e ? e : &copy, &it->map, err);
	if (r < 0)
		famfs_err_prefix(err, "\"%s\": ", n->path);
	return r;
}

static int instantiate_dir(struct kernel_maker *mk, const struct kernel_item *it, struct famfs_err *err)
{
	_cleanup_close_ int owned_fd = -1;
	const char *name;
	struct stat st;
	int dfd, r;

	dfd = parent_fd(mk, it, &name, &owned_fd, err);
	if (dfd < 0)
		return dfd;
	if (mkdirat(dfd, name, it->mode) == 0) {
		mk->created++;
		if (fchownat(dfd, name, it->uid, it->gid, AT_SYMLINK_NOFOLLOW) < 0 ||
		    fchmodat(dfd, name, it->mode, 0) < 0)
			return famfs_err_set(err, -errno, "\"%s\": cannot set owner and mode: %s", it->path,
					     strerror(errno));
		return 0;
	}
	if (errno != EEXIST)
		return famfs_err_set(err, -errno, "cannot create directory \"%s\" in the mount: %s", it->path,
				     strerror(errno));
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return famfs_err_set(err, -errno, "\"%s\": %s", it->path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return conflict(mk, err, "\"%s\" is a directory in the log but not in the mount", it->path);
	r = compare_owner(mk, it->path, &st, it->mode, it->uid, it->gid, err);
	if (r == 0)
		mk->existed++;
	return r;
}

/* An existing file: its map and its owner must be what the log says. */
static int verify_file(struct kernel_maker *mk, const struct kernel_item *it, struct famfs_err *err)
{
	struct famfs_ioc_get_fmap got = {0};
	_cleanup_close_ int fd = -1;
	struct famfs_err e2 = {0};
	const char *rel = it->path;
	struct stat st;

	fd = kernel_open_beneath(mk->root, rel, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0);
	if (fd < 0)
		return conflict(mk, err, "\"%s\" is in the mount but cannot be opened: %s", rel, strerror(-fd));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return conflict(mk, err, "\"%s\" is a file in the log but not a regular file in the mount", rel);
	if (ioctl(fd, FAMFSIOC_MAP_GET_V2, &got) < 0)
		return conflict(mk, err, "\"%s\" is in the mount without a famfs map (%s)", rel, strerror(errno));
	if (kernel_fmap_compare(&got, &it->map, &e2) < 0)
		return conflict(mk, err, "\"%s\" differs from its log entry: %s", rel, e2.msg);
	return compare_owner(mk, rel, &st, it->mode, it->uid, it->gid, err);
}

/* One file without MKFILES: open(O_CREAT | O_EXCL), fchown, fchmod, MAP_CREATE_V2, close. */
static int create_by_open(struct kernel_maker *mk, const struct kernel_item *it, int dfd, const char *name,
			  bool owned, struct famfs_err *err)
{
	bool fix_owner, fix_mode;
	int fd, r = 0;

	fd = openat(dfd, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, it->mode);
	if (fd < 0 && errno == EEXIST) {
		r = verify_file(mk, it, err);
		if (r == 0)
			mk->existed++;
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
	fix_owner = owned || it->uid != mk->euid || it->gid != mk->pgid || mk->pgid == (gid_t)-1;
	fix_mode = owned || fix_owner || mk->umask < 0 || (it->mode & 07000) ||
		   (it->mode & (uint32_t)mk->umask);
	if ((fix_owner && fchown(fd, it->uid, it->gid) < 0) || (fix_mode && fchmod(fd, it->mode) < 0))
		r = famfs_err_set(err, -errno, "\"%s\": cannot set owner and mode: %s", it->path, strerror(errno));
	if (r == 0 && ioctl(fd, FAMFSIOC_MAP_CREATE_V2, &it->map.fmap) < 0)
		r = famfs_err_set(err, -errno, "\"%s\": MAP_CREATE_V2 failed: %s", it->path, strerror(errno));
	close(fd);
	if (r < 0)
		/* No file without its map stays behind. */
		(void)unlinkat(dfd, name, 0);
	else
		mk->created++;
	return r;
}

/*
 * Creates the queued files in @dfd, their parent, with one MKFILES call,
 * or one at a time when the call as a whole fails.  @report: log and
 * count each failure (attach); otherwise the batch holds one file and its
 * result is returned, with @err, for the caller to count.
 */
static int mkfiles_flush(struct kernel_maker *mk, int dfd, bool report, struct famfs_err *err)
{
	uint32_t count = mk->batch ? kernel_mkfiles_count(mk->batch) : 0;
	const struct kernel_fmap *km;
	int call, r = 0;

	if (count == 0)
		return 0;
	call = kernel_mkfiles_submit(mk->batch, dfd);
	if (call == -ENOTTY) {
		manager_log("%s: famfs.ko has no MKFILES ioctl; creating files one at a time", mk->t->mountpoint);
		mk->mkfiles = false;
	}
	for (uint32_t i = 0; i < count; i++) {
		const struct kernel_item *it;
		struct famfs_err e = {0};
		void *tag;

		r = kernel_mkfiles_result(mk->batch, i, &tag, &km);
		it = tag;
		if (call < 0) {
			r = create_by_open(mk, it, dfd, it->path + it->name_off, !report, &e);
		} else if (r == 0) {
			mk->created++;
		} else if (r == -EEXIST) {
			r = verify_file(mk, it, &e);
			if (r == 0)
				mk->existed++;
		} else {
			r = famfs_err_set(&e, r, "cannot create \"%s\" in the mount: MKFILES: %s", it->path,
					  strerror(-r));
		}
		if (!report) {
			*err = e;
		} else if (r < 0) {
			manager_log("%s: %s", mk->t->mountpoint, e.msg);
			if (r != -EEXIST)
				mk->errors++;
		}
	}
	kernel_mkfiles_clear(mk->batch);
	return report ? 0 : r;
}

/* 1: queued for the next MKFILES call (attach); 0 or -errno: done. */
static int instantiate_file(struct kernel_maker *mk, struct kernel_item *it, struct famfs_err *err)
{
	_cleanup_close_ int owned_fd = -1;
	const char *name;
	int dfd;

	dfd = parent_fd(mk, it, &name, &owned_fd, err);
	if (dfd < 0)
		return dfd;
	if (!mk->mkfiles || !kernel_mkfiles_add(mk->batch, it->parent, it, name, it->mode, it->uid, it->gid, &it->map))
		return create_by_open(mk, it, dfd, name, owned_fd >= 0, err);
	if (owned_fd < 0)
		return 1;
	return mkfiles_flush(mk, dfd, false, err);
}

/*
 * Makes @it in the mount (or, during attach, may queue it for the next
 * MKFILES call: it must then stay where it is until that batch is sent).
 */
static int instantiate_item(struct kernel_maker *mk, struct kernel_item *it, struct famfs_err *err)
{
	uint32_t queued = mk->batch ? kernel_mkfiles_count(mk->batch) : 0;
	int r;

	/* The queue's directory is the cached parent until parent_fd moves on. */
	if (queued && (it->dir || it->parent != kernel_mkfiles_parent(mk->batch) || queued == KERNEL_MKFILES_MAX))
		mkfiles_flush(mk, mk->pfd, true, NULL);
	r = it->dir ? instantiate_dir(mk, it, err) : instantiate_file(mk, it, err);
	if (r > 0)
		return 0;
	if (r < 0 && r != -EEXIST)
		mk->errors++;
	return r;
}

/* Makes every item in the queue, reporting failures; waits for more when @wait. */
static void consume_queue(struct kernel_maker *mk, bool wait)
{
	struct kernel_item *it;

	while ((it = kernel_queue_next(mk->queue, wait)) != NULL) {
		struct famfs_err e = {0};

		if (instantiate_item(mk, it, &e) < 0)
			manager_log("%s: %s", mk->t->mountpoint, e.msg);
		kernel_queue_release(mk->queue, mk->batch ? kernel_mkfiles_count(mk->batch) : 0);
	}
}

/* The last batch, and the directory cache, once no more items come. */
static void consume_end(struct kernel_maker *mk)
{
	mkfiles_flush(mk, mk->pfd, true, NULL);
	kernel_queue_release(mk->queue, 0);
	parent_cache_drop(mk);
}

/* The worker: it makes what the replay produces, in log order, until the queue is closed. */
static void *instantiate_thread(void *arg)
{
	struct kernel_maker *mk = arg;

	consume_queue(mk, true);
	consume_end(mk);
	mk->worker_cpu_usec = kernel_cpu_usec(RUSAGE_THREAD);
	return NULL;
}

int kernel_maker_start(struct kernel_maker *mk, bool overlap, struct famfs_err *err)
{
	if (overlap && sysconf(_SC_NPROCESSORS_ONLN) >= 2) {
		mk->queue = kernel_queue_new(true);
		if (mk->queue && pthread_create(&mk->worker, NULL, instantiate_thread, mk) == 0) {
			mk->streaming = true;
			return 0;
		}
		kernel_queue_free(mk->queue);
	}
	mk->queue = kernel_queue_new(false);
	if (!mk->queue)
		return famfs_err_set(err, -ENOMEM, "out of memory");
	return 0;
}

bool kernel_maker_streaming(const struct kernel_maker *mk)
{
	return mk && mk->streaming;
}

/* Fills the next free slot of the queue with @node and publishes it. */
static int queue_node(struct kernel_maker *mk, uint32_t node, const struct famfs_log_entry *e,
		      struct famfs_err *err)
{
	struct kernel_item *it = kernel_queue_reserve(mk->queue);
	int r;

	if (!it)
		return famfs_err_set(err, -ENOBUFS, "the instantiation queue is full or closed");
	r = item_fill(mk, node, e, it, err);
	if (r == 0)
		kernel_queue_commit(mk->queue);
	return r;
}

int kernel_maker_feed(struct kernel_maker *mk, uint32_t node, const struct famfs_log_entry *e,
		      struct famfs_err *err)
{
	int r = queue_node(mk, node, e, err);

	if (r < 0)
		mk->fill_errors++;
	return r;
}

void kernel_maker_stop(struct kernel_maker *mk)
{
	if (!mk->streaming)
		return;
	kernel_queue_close(mk->queue);
	pthread_join(mk->worker, NULL);
	mk->streaming = false;
	mk->errors += mk->fill_errors;
}

void kernel_maker_make_range(struct kernel_maker *mk, uint32_t first, uint32_t end)
{
	for (uint32_t id = first; id < end; id++) {
		struct famfs_err e = {0};

		if (queue_node(mk, id, NULL, &e) < 0) {
			manager_log("%s: %s", mk->t->mountpoint, e.msg);
			mk->errors++;
			continue;
		}
		consume_queue(mk, false);
	}
	consume_end(mk);
}

int kernel_maker_make(struct kernel_maker *mk, uint32_t node, const struct famfs_log_entry *e,
		      struct famfs_err *err)
{
	struct kernel_item it;
	int r;

	r = item_fill(mk, node, e, &it, err);
	if (r < 0) {
		mk->errors++;
		return r;
	}
	return instantiate_item(mk, &it, err);
}

void kernel_maker_count_existing(struct kernel_maker *mk, uint64_t n)
{
	mk->existed += n;
}

void kernel_maker_counters(const struct kernel_maker *mk, struct kernel_stats *ret)
{
	ret->created = mk->created;
	ret->existed = mk->existed;
	ret->conflicts = mk->conflicts;
	ret->errors = mk->errors;
	ret->worker_cpu_usec = mk->worker_cpu_usec;
}

uint64_t kernel_cpu_usec(int who)
{
	struct rusage ru;

	if (getrusage(who, &ru) < 0)
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}
