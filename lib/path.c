// SPDX-License-Identifier: LGPL-2.1-or-later
#include <string.h>

#include "omf.h"
#include "path.h"

static enum famfs_finding_code check_components(const char *p, size_t len, struct famfs_err *err)
{
	size_t start = 0;

	if (len == 0) {
		famfs_err_set(err, -EINVAL, "path is empty");
		return FAMFS_F_PATH_EMPTY;
	}
	if (p[0] == '/') {
		famfs_err_set(err, -EINVAL, "path \"%.*s\" is absolute", (int)len, p);
		return FAMFS_F_PATH_ABSOLUTE;
	}
	for (size_t i = 0; i <= len; i++) {
		size_t clen;

		if (i < len && p[i] != '/')
			continue;
		clen = i - start;
		if (clen == 0) {
			famfs_err_set(err, -EINVAL, "path \"%.*s\" has an empty component", (int)len, p);
			return FAMFS_F_PATH_EMPTY_COMPONENT;
		}
		if ((clen == 1 && p[start] == '.') ||
		    (clen == 2 && p[start] == '.' && p[start + 1] == '.')) {
			famfs_err_set(err, -EINVAL, "path \"%.*s\" has a \"%.*s\" component",
				      (int)len, p, (int)clen, p + start);
			return FAMFS_F_PATH_DOT_COMPONENT;
		}
		start = i + 1;
	}
	if (strncmp(p, FAMFS_META_DIR, strlen(FAMFS_META_DIR)) == 0 &&
	    (len == strlen(FAMFS_META_DIR) || p[strlen(FAMFS_META_DIR)] == '/')) {
		famfs_err_set(err, -EINVAL,
			      "path \"%.*s\" is reserved: \"" FAMFS_META_DIR "\" at the root holds the kernel backend's superblock and log files",
			      (int)len, p);
		return FAMFS_F_PATH_RESERVED;
	}
	return FAMFS_OK;
}

enum famfs_finding_code famfs_path_check_field(const char *field, struct famfs_err *err)
{
	size_t len = strnlen(field, FAMFS_MAX_PATHLEN);

	if (len == FAMFS_MAX_PATHLEN) {
		famfs_err_set(err, -EINVAL, "path \"%.*s\" has no NUL in its %d bytes",
			      FAMFS_MAX_PATHLEN, field, FAMFS_MAX_PATHLEN);
		return FAMFS_F_PATH_UNTERMINATED;
	}
	return check_components(field, len, err);
}

enum famfs_finding_code famfs_path_check(const char *relpath, struct famfs_err *err)
{
	size_t len = strlen(relpath);

	if (len >= FAMFS_MAX_PATHLEN) {
		famfs_err_set(err, -ENAMETOOLONG, "path \"%s\" is %zu bytes long; famfs allows at most %d",
			      relpath, len, FAMFS_MAX_PATHLEN - 1);
		return FAMFS_F_PATH_UNTERMINATED;
	}
	return check_components(relpath, len, err);
}

size_t famfs_path_parent_len(const char *rel, size_t len)
{
	while (len > 0 && rel[len - 1] != '/')
		len--;
	return len > 0 ? len - 1 : 0;
}

int famfs_path_relative(const char *mountpoint, const char *abspath,
			char *ret_rel, size_t ret_size, struct famfs_err *err)
{
	size_t mlen = strlen(mountpoint);
	char rel[FAMFS_MAX_PATHLEN + 1];
	const char *p;
	size_t n = 0;

	while (mlen > 1 && mountpoint[mlen - 1] == '/')
		mlen--;
	if (abspath[0] != '/')
		return famfs_err_set(err, -EINVAL, "path \"%s\" is not absolute", abspath);
	if (strncmp(abspath, mountpoint, mlen) != 0 ||
	    (abspath[mlen] != '/' && abspath[mlen] != '\0' && !(mlen == 1 && mountpoint[0] == '/')))
		return famfs_err_set(err, -EINVAL, "path \"%s\" is not under the mount point %s",
				     abspath, mountpoint);
	p = abspath + mlen;
	while (*p == '/')
		p++;
	/* Copy, folding runs of slashes and dropping a trailing one. */
	for (; *p; p++) {
		if (*p == '/' && (p[1] == '/' || p[1] == '\0'))
			continue;
		if (n >= FAMFS_MAX_PATHLEN)
			return famfs_err_set(err, -ENAMETOOLONG,
					     "path \"%s\" is too long: famfs paths are at most %d bytes below the mount point",
					     abspath, FAMFS_MAX_PATHLEN - 1);
		rel[n++] = *p;
	}
	rel[n] = '\0';
	if (n == 0)
		return famfs_err_set(err, -EINVAL, "path \"%s\" is the mount point itself", abspath);
	if (famfs_path_check(rel, err) != FAMFS_OK)
		return err ? err->code : -EINVAL;
	if (n + 1 > ret_size)
		return famfs_err_set(err, -ENAMETOOLONG, "path \"%s\" is too long", abspath);
	memcpy(ret_rel, rel, n + 1);
	return 0;
}
