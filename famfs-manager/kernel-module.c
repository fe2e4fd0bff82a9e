// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * famfs.ko itself: whether it is loaded, loading it (finit_module(2) or
 * modprobe(8)), and its page-fault counters in /sys/fs/famfs.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cleanup.h"
#include "kernel.h"
#include "logging.h"

#define KERNEL_SYSFS_DIR "/sys/fs/famfs"

extern char **environ;

bool kernel_famfs_available(const char *root)
{
	_cleanup_fclose_ FILE *fp = NULL;
	char path[4096], line[256];
	struct stat st;

	if (!root)
		root = "";
	snprintf(path, sizeof(path), "%s/sys/module/famfs", root);
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return true;
	snprintf(path, sizeof(path), "%s/proc/filesystems", root);
	fp = fopen(path, "re");
	if (!fp)
		return false;
	while (fgets(line, sizeof(line), fp)) {
		char *name = strrchr(line, '\t');

		name = name ? name + 1 : line;
		name[strcspn(name, " \t\r\n")] = '\0';
		if (strcmp(name, "famfs") == 0)
			return true;
	}
	return false;
}

static int load_ko(const char *path, struct famfs_err *err)
{
	_cleanup_close_ int fd = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return famfs_err_set(err, -errno, "cannot open %s: %s", path, strerror(errno));
	if (syscall(SYS_finit_module, fd, "", 0) < 0 && errno != EEXIST)
		return famfs_err_set(err, -errno, "cannot load %s: %s", path, strerror(errno));
	return 0;
}

static int modprobe(const char *name, struct famfs_err *err)
{
	char *argv[] = { (char *)"modprobe", (char *)"-q", (char *)name, NULL };
	pid_t pid;
	int status, r;

	if (strchr(name, '/') || name[0] == '-')
		return famfs_err_set(err, -EINVAL, "\"%s\" is neither a .ko path nor a module name", name);
	r = posix_spawnp(&pid, "modprobe", NULL, NULL, argv, environ);
	if (r != 0)
		return famfs_err_set(err, -r, "cannot run modprobe: %s", strerror(r));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return famfs_err_set(err, -errno, "waitpid: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return famfs_err_set(err, -ENOENT, "modprobe %s failed (status %d)", name,
				     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}

int kernel_famfs_load(const char *spec, struct famfs_err *err)
{
	size_t n;

	if (!spec || !spec[0])
		spec = "famfs";
	n = strlen(spec);
	if (n > 3 && strcmp(spec + n - 3, ".ko") == 0)
		return load_ko(spec, err);
	return modprobe(spec, err);
}

static int read_u64_file(const char *path, uint64_t *ret)
{
	_cleanup_close_ int fd = -1;
	char buf[64], *end;
	unsigned long long v;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
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

int kernel_module_fault_counters(uint64_t ret[3])
{
	int r = kernel_read_fault_counters(KERNEL_SYSFS_DIR, ret);

	if (r < 0)
		ret[0] = ret[1] = ret[2] = 0;
	return r;
}

void kernel_enable_fault_counting(void)
{
	_cleanup_close_ int fd = -1;
	uint64_t on = 0;

	if (read_u64_file(KERNEL_SYSFS_DIR "/fault_count_enable", &on) < 0 || on)
		return;
	fd = open(KERNEL_SYSFS_DIR "/fault_count_enable", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, "1\n", 2) < 0)
		manager_log("famfs-manager: cannot enable famfs fault counting: %s", strerror(errno));
}
