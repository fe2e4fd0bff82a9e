// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Who uses a kernel mount: what keeps umount(2) from succeeding, found the
 * way fuser(1) finds it, from /proc: each process's descriptors, mappings,
 * working and root directories, compared by the device the mount's inodes
 * are on.  The daemon's own (the .meta files, the mount's root) are not
 * counted: it lets go of them itself when it unmounts.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cleanup.h"
#include "kernel.h"

static bool on_dev(const char *path, dev_t dev)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_dev == dev;
}

static bool fds_on_dev(const char *pid, dev_t dev)
{
	char dir[64], p[320];
	DIR *d;
	struct dirent *de;
	bool found = false;

	snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		found = on_dev(p, dev);
	}
	closedir(d);
	return found;
}

static bool maps_on_dev(const char *pid, dev_t dev)
{
	_cleanup_fclose_ FILE *f = NULL;
	char p[64], line[512];

	snprintf(p, sizeof(p), "/proc/%s/maps", pid);
	f = fopen(p, "re");
	if (!f)
		return false;
	/* address perms offset major:minor inode path */
	while (fgets(line, sizeof(line), f)) {
		unsigned maj, min;
		unsigned long ino;

		if (sscanf(line, "%*s %*s %*s %x:%x %lu", &maj, &min, &ino) == 3 && ino != 0 &&
		    makedev(maj, min) == dev)
			return true;
		while (!strchr(line, '\n') && fgets(line, sizeof(line), f))
			;
	}
	return false;
}

static void comm_of(const char *pid, char *buf, size_t len)
{
	_cleanup_fclose_ FILE *f = NULL;
	char p[64];

	snprintf(p, sizeof(p), "/proc/%s/comm", pid);
	f = fopen(p, "re");
	if (!f || !fgets(buf, (int)len, f))
		snprintf(buf, len, "?");
	buf[strcspn(buf, "\n")] = '\0';
}

int kernel_mount_users(const char *mountpoint, char *buf, size_t len)
{
	char self[32], p[320], comm[64];
	struct stat st;
	struct dirent *de;
	size_t used = 0;
	DIR *d;
	int n = 0;

	if (len)
		buf[0] = '\0';
	if (stat(mountpoint, &st) < 0)
		return -errno;
	snprintf(self, sizeof(self), "%d", (int)getpid());
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		bool busy;

		if (!isdigit((unsigned char)de->d_name[0]) || !strcmp(de->d_name, self))
			continue;
		snprintf(p, sizeof(p), "/proc/%s/cwd", de->d_name);
		busy = on_dev(p, st.st_dev);
		snprintf(p, sizeof(p), "/proc/%s/root", de->d_name);
		busy = busy || (on_dev(p, st.st_dev));
		busy = busy || fds_on_dev(de->d_name, st.st_dev) || maps_on_dev(de->d_name, st.st_dev);
		if (!busy)
			continue;
		if (n < 4 && used < len) {
			comm_of(de->d_name, comm, sizeof(comm));
			used += (size_t)snprintf(buf + used, len - used, "%spid %s (%s)", n ? ", " : "", de->d_name, comm);
		}
		n++;
	}
	closedir(d);
	if (n > 4 && used < len)
		snprintf(buf + used, len - used, " and %d more", n - 4);
	return n;
}
