// SPDX-License-Identifier: LGPL-2.1-or-later
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "sysuuid.h"

static int mkdir_parents(const char *file)
{
	char dir[4096];
	size_t len = strlen(file);

	if (len >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, file, len + 1);
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

static int create_uuid_file(const char *file, struct famfs_err *err)
{
	char text[37];
	uuid_t u;
	int fd, r;

	r = mkdir_parents(file);
	if (r < 0)
		return famfs_err_set(err, r, "cannot create the directory of %s: %s", file, strerror(-r));
	uuid_generate(u);
	uuid_unparse(u, text);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (fd < 0) {
		if (errno == EEXIST)
			return 0;   /* someone else was first: use theirs */
		return famfs_err_set(err, -errno, "cannot create %s: %s", file, strerror(errno));
	}
	/* 36 characters and the NUL, as upstream writes it. */
	if (write(fd, text, sizeof(text)) != (ssize_t)sizeof(text)) {
		r = errno ? -errno : -EIO;
		close(fd);
		unlink(file);
		return famfs_err_set(err, r, "cannot write %s: %s", file, strerror(-r));
	}
	if (close(fd) < 0)
		return famfs_err_set(err, -errno, "cannot write %s: %s", file, strerror(errno));
	return 0;
}

int famfs_system_uuid_get(const char *file, bool create, uint8_t ret[16], struct famfs_err *err)
{
	char text[64] = "";
	size_t n;
	FILE *f;
	int r;

	if (!file)
		file = FAMFS_DEFAULT_SYSTEM_UUID_FILE;
	if (create && access(file, F_OK) < 0 && errno == ENOENT) {
		r = create_uuid_file(file, err);
		if (r < 0)
			return r;
	}
	f = fopen(file, "re");
	if (!f)
		return famfs_err_set(err, -errno, "cannot read the system UUID from %s: %s", file, strerror(errno));
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	text[strcspn(text, "\r\n \t")] = '\0';
	if (uuid_parse(text, ret) < 0)
		return famfs_err_set(err, -EINVAL, "%s does not hold a UUID", file);
	return 0;
}
