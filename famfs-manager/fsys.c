// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One attached file system: attach (check, open, plan, replay, backend),
 * the log follower and health.  What changed is marked dirty; the manager
 * core announces it.
 */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-bus.h>
#include <uuid/uuid.h>

#include "check.h"
#include "cleanup.h"
#include "escape.h"
#include "famfs/bus-api.h"
#include "fsys.h"
#include "logging.h"
#include "medium-guard.h"

const char *health_name(enum health h)
{
	switch (h) {
	case HEALTH_OK:
		return "ok";
	case HEALTH_DEGRADED:
		return "degraded";
	default:
		return "failed";
	}
}

static uint64_t now_usec(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

const char *fsys_name(const struct fsys *f)
{
	if (f->bt.mountpoint && f->bt.mountpoint[0])
		return f->bt.mountpoint;
	return f->bt.uuid[0] ? f->bt.uuid : f->bt.device;
}

const char *fsys_role(const struct fsys *f)
{
	if (!f->bt.fs)
		return "unknown";
	return famfs_fs_is_master(f->bt.fs) ? "master" : "client";
}

struct famfs_ns *fsys_namespace(const struct fsys *f)
{
	return f->bt.fs ? famfs_fs_namespace(f->bt.fs) : NULL;
}

uint64_t fsys_capacity(const struct fsys *f)
{
	return f->bt.fs ? famfs_fs_layout(f->bt.fs)->dev_size : 0;
}

uint64_t fsys_allocated(const struct fsys *f)
{
	return f->bt.fs ? famfs_fs_allocator(f->bt.fs)->used * FAMFS_ALLOC_UNIT : 0;
}

uint64_t fsys_free_bytes(const struct fsys *f)
{
	return f->bt.fs ? famfs_alloc_free_bytes(famfs_fs_allocator(f->bt.fs)) : 0;
}

uint64_t fsys_log_used(const struct fsys *f)
{
	return f->bt.fs ? famfs_fs_applied(f->bt.fs) : 0;
}

uint64_t fsys_log_total(const struct fsys *f)
{
	return f->bt.fs ? famfs_fs_log_header(f->bt.fs)->last_index + 1 : 0;
}

uint64_t fsys_replayed_total(const struct fsys *f)
{
	struct famfs_fs_stats st;

	if (!f->bt.fs)
		return 0;
	famfs_fs_get_stats(f->bt.fs, &st);
	return st.replayed_total;
}

uint64_t fsys_count(const struct fsys *f, bool dirs)
{
	/* The root is not counted: nobody created it. */
	return f->bt.fs ? famfs_ns_count(famfs_fs_namespace(f->bt.fs), dirs ? FAMFS_NS_DIR : FAMFS_NS_FILE) : 0;
}

char *fsys_abspath(const struct fsys *f, const char *rel)
{
	size_t a = strlen(f->bt.mountpoint), b = strlen(rel);
	char *p = malloc(a + b + 2);

	if (!p)
		return NULL;
	memcpy(p, f->bt.mountpoint, a);
	if (b) {
		p[a] = '/';
		memcpy(p + a + 1, rel, b + 1);
	} else {
		p[a] = '\0';
	}
	return p;
}

static void clear_reasons(struct fsys *f)
{
	for (size_t i = 0; i < f->nreasons; i++)
		free(f->reasons[i]);
	f->nreasons = 0;
}

/* Reasons quote names from the medium; they go out escaped (escape.h), as on the bus. */
__attribute__((format(printf, 3, 4)))
static void add_reason(char **list, size_t *n, const char *fmt, ...)
{
	va_list ap;
	char *s, *escaped;

	if (*n >= FSYS_MAX_REASONS)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) >= 0) {
		escaped = famfs_escape_dup(s);
		free(s);
		if (escaped)
			list[(*n)++] = escaped;
	}
	va_end(ap);
}

void fsys_update_health(struct fsys *f)
{
	char *r[FSYS_MAX_REASONS];
	size_t n = 0;
	enum health h = HEALTH_OK;
	bool same;

	if (f->replay_unstamped) {
		f->last_replay = now_usec(CLOCK_REALTIME);
		f->replay_unstamped = false;
	}
	if (!f->bt.fs) {
		add_reason(r, &n, "%s", f->attach_error);
		h = HEALTH_FAILED;
	} else {
		uint64_t used = fsys_log_used(f), total = fsys_log_total(f);
		uint64_t cap = fsys_capacity(f), alloc = fsys_allocated(f);
		const char *change = famfs_fs_medium_change(f->bt.fs);
		struct famfs_fs_stats st;

		famfs_fs_get_stats(f->bt.fs, &st);

		if (f->media_error[0]) {
			add_reason(r, &n, "%s", f->media_error);
			h = HEALTH_FAILED;
		}
		if (change) {
			add_reason(r, &n, "%s", change);
			h = HEALTH_FAILED;
		}
		if (f->device_gone) {
			add_reason(r, &n, "device gone: %s no longer exists", f->bt.device);
			h = HEALTH_FAILED;
		}
		if (f->header_error[0]) {
			add_reason(r, &n, "log header invalid: %s", f->header_error);
			h = HEALTH_FAILED;
		}
		if (f->corrupt[0]) {
			add_reason(r, &n, "%s", f->corrupt);
			if (h < HEALTH_DEGRADED)
				h = HEALTH_DEGRADED;
		}
		if (f->stalled && now_usec(CLOCK_MONOTONIC) - f->stall_since >= f->grace_usec) {
			if (!f->corrupt[0])
				add_reason(r, &n, "log corrupt at index %" PRIu64 ": %s", f->stall_index,
					   f->stall_msg);
			add_reason(r, &n, "follower stuck at log index %" PRIu64 " for %" PRIu64 " s",
				   f->stall_index,
				   (now_usec(CLOCK_MONOTONIC) - f->stall_since) / 1000000);
			if (h < HEALTH_DEGRADED)
				h = HEALTH_DEGRADED;
		}
		if (st.rejected_total > 0) {
			add_reason(r, &n, "%" PRIu64 " log entries refused; last: %s", st.rejected_total,
				   st.last_rejected ? st.last_rejected : "");
			if (h < HEALTH_DEGRADED)
				h = HEALTH_DEGRADED;
		}
		if (st.crosslinked_units > 0) {
			add_reason(r, &n, "%" PRIu64 " allocation units are claimed by more than one file",
				   st.crosslinked_units);
			if (h < HEALTH_DEGRADED)
				h = HEALTH_DEGRADED;
		}
		if (total > 0 && used * 100 >= total * FSYS_LOG_FULL_PERCENT) {
			add_reason(r, &n, "log %" PRIu64 "%% full (%" PRIu64 " of %" PRIu64 " entries)",
				   used * 100 / total, used, total);
			if (h < HEALTH_DEGRADED)
				h = HEALTH_DEGRADED;
		}
		if (cap > 0 && alloc * 100 >= cap * FSYS_SPACE_FULL_PERCENT) {
			add_reason(r, &n, "space %" PRIu64 "%% used (%" PRIu64 " of %" PRIu64 " bytes)",
				   alloc * 100 / cap, alloc, cap);
			if (h < HEALTH_DEGRADED)
				h = HEALTH_DEGRADED;
		}
	}
	same = h == f->health && n == f->nreasons;
	for (size_t i = 0; same && i < n; i++)
		same = strcmp(r[i], f->reasons[i]) == 0;
	if (same) {
		for (size_t i = 0; i < n; i++)
			free(r[i]);
		return;
	}
	clear_reasons(f);
	memcpy(f->reasons, r, n * sizeof(*r));
	f->nreasons = n;
	f->health = h;
	f->dirty = true;
}

void fsys_note_new_node(struct fsys *f, uint32_t node, const struct famfs_log_entry *e)
{
	const struct famfs_ns_node *n = famfs_ns_node(famfs_fs_namespace(f->bt.fs), node);
	struct famfs_err err = {0};

	if (!n)
		return;
	if (f->bt.ops->instantiate && f->bt.ops->instantiate(&f->bt, node, e, &err) < 0)
		log_fs(LOG_WARNING, f, "cannot instantiate \"%s\": %s", n->path, err.msg);
	f->dirty = true;
	/*
	 * Stamped once per batch, in fsys_update_health: where the clock
	 * source is not readable from user space (a VM's HPET), each read is
	 * a system call.
	 */
	f->replay_unstamped = true;
	if (!f->announcing)
		return;
	if (f->npending == f->cpending) {
		size_t c = f->cpending ? f->cpending * 2 : 64;
		char **p = realloc(f->pending, c * sizeof(*p));

		if (!p)
			return;
		f->pending = p;
		f->cpending = c;
	}
	f->pending[f->npending] = fsys_abspath(f, n->path);
	if (f->pending[f->npending])
		f->npending++;
}

static void on_apply(struct famfs_fs *fs, uint64_t index, const struct famfs_log_entry *entry,
		     uint32_t node, void *userdata)
{
	fsys_note_new_node(userdata, node, entry);
}

static bool device_present(struct fsys *f)
{
	struct stat st;

	if (stat(f->bt.device, &st) < 0)
		return false;
	if (fstat(famfs_fs_device(f->bt.fs)->fd, &st) < 0 || st.st_nlink == 0)
		return false;
	return true;
}

bool fsys_follow(struct fsys *f)
{
	struct famfs_replay_result res;
	struct famfs_err err = {0};
	struct famfs_fs_stats st;
	uint64_t rejected_before;
	int r;

	/* Until an attach waiting for the event loop is finished, there is nothing to follow from. */
	if (!f->bt.fs || f->rest)
		return false;
	f->polls++;
	if (!device_present(f)) {
		if (!f->device_gone) {
			f->device_gone = true;
			log_fs(LOG_WARNING, f, "device %s is gone", f->bt.device);
		}
		fsys_update_health(f);
		return f->dirty;
	}
	f->device_gone = false;
	/*
	 * A mount disabled by a media failure fails every read of the log
	 * (the medium guard would make them zeros): nothing to follow.
	 */
	if (!f->media_error[0] && f->bt.ops->media_error &&
	    f->bt.ops->media_error(&f->bt, f->media_error, sizeof(f->media_error)) > 0)
		log_fs(LOG_ERR, f, "%s", f->media_error);
	if (f->media_error[0]) {
		fsys_update_health(f);
		return f->dirty;
	}
	famfs_fs_get_stats(f->bt.fs, &st);
	rejected_before = st.rejected_total;
	r = famfs_fs_replay(f->bt.fs, on_apply, f, &res, &err);
	if (r == -FAMFS_EMEDIUMCHANGED) {
		if (!f->medium_changed_at) {
			f->medium_changed_at = now_usec(CLOCK_MONOTONIC);
			log_fs(LOG_ERR, f, "%s; refusing every change to it", err.msg);
		}
	} else if (r < 0) {
		if (strcmp(f->header_error, err.msg) != 0) {
			log_fs(LOG_ERR, f, "%s", err.msg);
			snprintf(f->header_error, sizeof(f->header_error), "%s", err.msg);
		}
	} else {
		f->header_error[0] = '\0';
		if (res.stalled) {
			if (!f->stalled || f->stall_index != res.stalled_index) {
				f->stalled = true;
				f->stall_index = res.stalled_index;
				f->stall_since = now_usec(CLOCK_MONOTONIC);
				f->invalid_seen++;
				f->dirty = true;
			}
			snprintf(f->stall_msg, sizeof(f->stall_msg), "%s", res.stall_msg);
			f->torn_retries++;
		} else if (f->stalled) {
			f->stalled = false;
			f->dirty = true;
		}
		famfs_fs_get_stats(f->bt.fs, &st);
		if (st.rejected_total != rejected_before) {
			f->invalid_seen += st.rejected_total - rejected_before;
			f->dirty = true;
		}
	}
	fsys_update_health(f);
	return f->dirty;
}

void fsys_medium(struct fsys *f, const uint8_t **base, uint64_t *readable)
{
	*base = f->bt.ops->medium_view ? f->bt.ops->medium_view(&f->bt, readable) : NULL;
	if (!*base) {
		const struct famfs_device *dev = famfs_fs_device(f->bt.fs);

		*base = dev->base;
		*readable = dev->size;
	}
}

static void set_uuid(struct fsys *f, const uint8_t *u)
{
	static const uint8_t zero[16];

	if (memcmp(u, zero, 16) == 0)
		f->bt.uuid[0] = '\0';
	else
		uuid_unparse_lower(u, f->bt.uuid);
}

/*
 * The checker's verdict at attach: the first damage it reports (a reason),
 * and the uuid of a readable superblock.  It is computed into this struct,
 * never into the fsys, so that it can run on a thread of its own.
 */
struct attach_check {
	const uint8_t *base;
	uint64_t readable;        /* bytes mapped at base */
	uint64_t size;
	char corrupt[FAMFS_ERR_MSG_MAX];
	bool have_uuid;
	uint8_t uuid[16];
	pthread_t thread;
	bool threaded;
};

static void attach_check_run(struct attach_check *c)
{
	struct famfs_check_report *rep = NULL;
	int r;

	r = famfs_check_view(c->base, c->readable, c->size, 0, &rep);
	if (r < 0) {
		snprintf(c->corrupt, sizeof(c->corrupt), "cannot check: %s", strerror(-r));
		return;
	}
	if (rep->summary.superblock_valid) {
		c->have_uuid = true;
		memcpy(c->uuid, rep->summary.uuid, sizeof(c->uuid));
	}
	if (famfs_check_report_errors(rep) > 0 && !famfs_check_repair_fixes_all(rep)) {
		for (size_t k = 0; k < rep->nfindings; k++) {
			const struct famfs_finding *x = &rep->findings[k];

			if (x->severity < FAMFS_SEV_ERROR)
				continue;
			if (x->index >= 0)
				snprintf(c->corrupt, sizeof(c->corrupt), "log corrupt at index %" PRId64 ": %s",
					 x->index, x->message);
			else
				snprintf(c->corrupt, sizeof(c->corrupt), "%s", x->message);
			break;
		}
		if (!c->corrupt[0])
			snprintf(c->corrupt, sizeof(c->corrupt), "%zu errors found by the checker",
				 famfs_check_report_errors(rep));
	}
	famfs_check_report_free(rep);
}

static void *attach_check_thread(void *arg)
{
	/*
	 * Background work: the mount is usable before the verdict is in, so
	 * the replay and the kernel backend's worker come first when the CPUs
	 * are few.  Nice is per thread on Linux, and the checker's own
	 * threads inherit it.
	 */
	(void)setpriority(PRIO_PROCESS, (id_t)gettid(), 19);
	attach_check_run(arg);
	return NULL;
}

/*
 * Starts the checker on @base: on a thread when there is more than one CPU
 * (the replay and the backend's attach run meanwhile; the medium stays
 * mapped until attach_check_finish), else right here.
 */
static void attach_check_start(struct attach_check *c, const uint8_t *base, uint64_t readable, uint64_t size,
			       bool may_thread)
{
	memset(c, 0, sizeof(*c));
	c->base = base;
	c->readable = readable;
	c->size = size;
	if (may_thread && sysconf(_SC_NPROCESSORS_ONLN) >= 2 &&
	    pthread_create(&c->thread, NULL, attach_check_thread, c) == 0) {
		c->threaded = true;
		return;
	}
	attach_check_run(c);
}

/* Waits for the checker and keeps what it found in @f. */
static void attach_check_finish(struct fsys *f, struct attach_check *c)
{
	if (c->threaded) {
		pthread_join(c->thread, NULL);
		c->threaded = false;
	}
	if (c->corrupt[0])
		snprintf(f->corrupt, sizeof(f->corrupt), "%s", c->corrupt);
	if (!f->bt.uuid[0] && c->have_uuid)
		set_uuid(f, c->uuid);
}

/* Runs the checker and keeps the first damage it reports as a reason. */
static void check_at_attach(struct fsys *f, const uint8_t *base, uint64_t size)
{
	struct attach_check c;

	attach_check_start(&c, base, size, size, false);
	attach_check_finish(f, &c);
}

static struct famfs_fs *close_fs(struct fsys *f)
{
	if (f->bt.fs)
		medium_guard_remove(famfs_fs_device(f->bt.fs)->base);
	return famfs_fs_close(f->bt.fs);
}

/* Opens the file system on @a->device; masters need write access: try it, and fall back to reading. */
static int open_fs(struct fsys *f, const struct fsys_attach_args *a, struct famfs_err *err)
{
	const struct famfs_device *dev;
	int r;

	r = famfs_fs_open(a->device, a->override && a->override->read_only ? 0 : FAMFS_DEVICE_WRITE,
			  a->override && a->override->read_only ? NULL : a->host_uuid, &f->bt.fs, err);
	if (r == -EACCES || r == -EROFS || r == -EPERM) {
		memset(err, 0, sizeof(*err));
		r = famfs_fs_open(a->device, 0, a->host_uuid, &f->bt.fs, err);
	}
	if (r < 0) {
		f->bt.fs = NULL;
		return r;
	}
	dev = famfs_fs_device(f->bt.fs);
	(void)medium_guard_add(dev->base, dev->size);
	return 0;
}

/* A device that holds no usable file system: why, and what the checker says of it. */
static void attach_failed(struct fsys *f, int r, const struct famfs_err *err)
{
	struct famfs_device *dev = NULL;
	struct famfs_err e2 = {0};

	snprintf(f->attach_error, sizeof(f->attach_error), "%s%s",
		 r == -EUCLEAN ? "bad superblock or log header: " : "cannot attach: ", err->msg);
	if (famfs_device_open(f->bt.device, 0, &dev, &e2) == 0) {
		check_at_attach(f, dev->base, dev->size);
		famfs_device_close(dev);
	}
	f->corrupt[0] = '\0';
}

/*
 * What an attach still has to do once the backend is prepared: the replay,
 * the backend's attach and the check's verdict.  Kept in the fsys while an
 * adopted mount waits for fsys_finish_attach (see fsys_attach_args).
 */
struct attach_rest {
	struct attach_plan plan;
	struct attach_check chk;
	int prepared;                   /* attach_backend_prepare's result */
	struct famfs_err err;           /* and its error */
};

/* Plan and backend of an opened file system, and the check started; the rest now or later. */
static int attach_opened(struct fsys *f, const struct fsys_attach_args *a)
{
	const struct famfs_device *dev = famfs_fs_device(f->bt.fs);
	struct attach_rest *rest;
	const uint8_t *view;
	uint64_t readable;
	int r;

	rest = calloc(1, sizeof(*rest));
	if (!rest)
		return -ENOMEM;
	/* Entries another local writer appends are announced even when a create finds them. */
	famfs_fs_set_observer(f->bt.fs, on_apply, f);
	set_uuid(f, famfs_fs_superblock(f->bt.fs)->uuid);
	attach_policy_plan(a->policy, f->bt.uuid, dev->kind == FAMFS_DEVICE_IMAGE, a->override, &rest->plan);
	r = attach_plan_apply(&f->bt, &rest->plan);
	if (r < 0) {
		attach_plan_done(&rest->plan);
		free(rest);
		return r;
	}
	/*
	 * The full check runs alongside the replay and the backend's attach
	 * when it can have a CPU of its own; what it finds is only kept once
	 * it is done (the health is computed again with it before anyone sees
	 * it), and the medium stays open until then.  It starts once the
	 * backend is prepared, so that it reads the medium where the backend
	 * says it is coherent.
	 */
	rest->prepared = attach_backend_prepare(&f->bt, &rest->plan, &rest->err);
	fsys_medium(f, &view, &readable);
	attach_check_start(&rest->chk, view, readable, dev->size, true);
	f->rest = rest;
	/* An adopted mount serves its files already: the replay can wait for the event loop. */
	if (rest->prepared >= 0 && f->bt.adopted && a->defer_replay)
		return 0;
	fsys_finish_attach(f);
	return 0;
}

void fsys_finish_attach(struct fsys *f)
{
	struct attach_rest *rest = TAKE_PTR(f->rest);
	bool announcing = f->announcing;
	struct famfs_err err;
	int r;

	if (!rest)
		return;
	err = rest->err;
	/* What the attach's replay finds was there before: it is not announced as added. */
	f->announcing = false;
	r = rest->prepared;
	if (r >= 0) {
		r = famfs_fs_replay(f->bt.fs, on_apply, f, NULL, &err);
		if (r < 0)
			snprintf(f->header_error, sizeof(f->header_error), "%s", err.msg);
		/* A stall at attach starts the grace period like any other. */
		fsys_follow(f);
		r = attach_backend_attach(&f->bt, &rest->plan, &err);
	}
	attach_plan_done(&rest->plan);
	attach_check_finish(f, &rest->chk);
	if (r < 0) {
		snprintf(f->attach_error, sizeof(f->attach_error), "backend %s: %s", f->bt.ops->name, err.msg);
		f->bt.fs = close_fs(f);
	}
	free(rest);
	f->announcing = announcing;
	fsys_update_health(f);
}

/* An attach left waiting that will not be finished: the check's thread joined, the plan let go. */
static void abandon_attach(struct fsys *f)
{
	struct attach_rest *rest = TAKE_PTR(f->rest);

	if (!rest)
		return;
	attach_check_finish(f, &rest->chk);
	attach_plan_done(&rest->plan);
	free(rest);
}

bool fsys_attach_waiting(const struct fsys *f)
{
	return f->rest != NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct fsys *, fsys_free);

int fsys_attach(const struct fsys_attach_args *a, struct fsys **ret)
{
	_cleanup_(fsys_freep) struct fsys *f = NULL;
	struct famfs_err err = {0};
	int r;

	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->grace_usec = a->grace_ms * 1000;
	f->bt.ops = &backend_view;
	f->bt.device = strdup(a->device);
	f->bt.mountpoint = strdup(a->mountpoint);
	if (!f->bt.device || !f->bt.mountpoint)
		return -ENOMEM;
	r = open_fs(f, a, &err);
	if (r < 0)
		attach_failed(f, r, &err);
	else {
		r = attach_opened(f, a);
		if (r < 0)
			return r;
	}
	r = sd_bus_path_encode(FAMFS_FS_PATH_PREFIX, f->bt.uuid[0] ? f->bt.uuid : f->bt.device,
			       &f->object_path);
	if (r < 0)
		return r;
	f->announcing = true;
	f->dirty = false;
	fsys_update_health(f);
	f->dirty = false;
	*ret = TAKE_PTR(f);
	return 0;
}

int fsys_in_use(struct fsys *f, char *buf, size_t len)
{
	if (!f->bt.fs || !f->bt.ops->in_use || !f->bt.mountpoint[0])
		return 0;
	return f->bt.ops->in_use(&f->bt, buf, len);
}

void fsys_detach(struct fsys *f, const char *reason)
{
	if (f->bt.fs) {
		if (f->bt.ops->detach)
			f->bt.ops->detach(&f->bt);
		f->bt.fs = close_fs(f);
	}
	snprintf(f->attach_error, sizeof(f->attach_error), "%s", reason);
	f->corrupt[0] = '\0';
	f->header_error[0] = '\0';
	f->stalled = false;
	f->device_gone = true;
	f->dirty = true;
	fsys_update_health(f);
	f->dirty = true;
}

bool fsys_medium_changed_for(const struct fsys *f, uint64_t usec)
{
	return f->bt.fs && f->medium_changed_at && now_usec(CLOCK_MONOTONIC) - f->medium_changed_at >= usec;
}

void fsys_clear_pending(struct fsys *f)
{
	for (size_t i = 0; i < f->npending; i++)
		free(f->pending[i]);
	f->npending = 0;
}

struct fsys *fsys_free(struct fsys *f)
{
	if (!f)
		return NULL;
	abandon_attach(f);
	if (f->bt.fs && f->bt.ops->detach)
		f->bt.ops->detach(&f->bt);
	f->bt.fs = close_fs(f);
	clear_reasons(f);
	fsys_clear_pending(f);
	free(f->pending);
	free(f->bt.device);
	free(f->bt.mountpoint);
	free(f->object_path);
	free(f);
	return NULL;
}
