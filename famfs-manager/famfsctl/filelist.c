// SPDX-License-Identifier: LGPL-2.1-or-later
/* The file list of create --from-list (format in filelist.h and famfsctl(8)). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "escape.h"
#include "filelist.h"
#include "fs.h"
#include "units.h"

#define FIELDS_MAX 3
#define BLANKS " \t"

void file_list_clear(struct file_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	*l = (struct file_list){ 0 };
}

static int parse_mode_field(const char *s, uint32_t *ret)
{
	char *end;
	unsigned long v;

	if (s[0] < '0' || s[0] > '7')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 8);
	if (errno || *end || v > 07777)
		return -EINVAL;
	*ret = (uint32_t)v;
	return 0;
}

/* One line that is not blank or a comment, cut into @fields in place. */
static int parse_line(char *line, const char *name, unsigned int no, uint32_t default_mode,
		      struct file_list_entry *ret, struct famfs_err *err)
{
	char *fields[FIELDS_MAX + 1], *save = NULL;
	struct file_list_entry en = { .line = no, .mode = default_mode };
	size_t n = 0;
	int r;

	for (char *t = strtok_r(line, BLANKS, &save); t; t = strtok_r(NULL, BLANKS, &save)) {
		if (n == FIELDS_MAX + 1)
			break;
		fields[n++] = t;
	}
	if (n < 2 || n > FIELDS_MAX)
		return famfs_err_set(err, -EINVAL, "%s:%u: expected PATH SIZE [MODE], found %s%zu field%s", name,
				     no, n > FIELDS_MAX ? "more than " : "", n > FIELDS_MAX ? (size_t)FIELDS_MAX : n,
				     n == 1 ? "" : "s");
	if (fields[0][0] != '/')
		return famfs_err_set(err, -EINVAL, "%s:%u: path \"%.80s\" is not absolute", name, no,
				     famfs_is_utf8(fields[0]) ? fields[0] : "(not UTF-8)");
	r = famfs_parse_size(fields[1], &en.size);
	if (r == -ERANGE)
		return famfs_err_set(err, -EINVAL, "%s:%u: size \"%.40s\" does not fit in 64 bits", name, no,
				     fields[1]);
	if (r < 0)
		return famfs_err_set(err, -EINVAL, "%s:%u: invalid size \"%.40s\" (examples: 4096, 2M, 1G)", name,
				     no, famfs_is_utf8(fields[1]) ? fields[1] : "(not UTF-8)");
	if (en.size == 0)
		return famfs_err_set(err, -EINVAL, "%s:%u: size 0: famfs files are preallocated, give a size above 0",
				     name, no);
	if (n == 3 && parse_mode_field(fields[2], &en.mode) < 0)
		return famfs_err_set(err, -EINVAL, "%s:%u: invalid mode \"%.40s\": expected octal permission bits like 0644",
				     name, no, famfs_is_utf8(fields[2]) ? fields[2] : "(not UTF-8)");
	en.path = famfs_is_utf8(fields[0]) ? strdup(fields[0]) : famfs_escape_dup(fields[0]);
	if (!en.path)
		return famfs_err_set(err, -ENOMEM, "%s:%u: out of memory", name, no);
	*ret = en;
	return 0;
}

int file_list_parse(FILE *f, const char *name, uint32_t default_mode, struct file_list *ret,
		    struct famfs_err *err)
{
	_cleanup_(file_list_clear) struct file_list l = { 0 };
	_cleanup_free_ char *line = NULL;
	size_t cap = 0, size = 0;
	unsigned int no = 0;
	ssize_t len;
	int r;

	while ((len = getline(&line, &cap, f)) >= 0) {
		char *p;

		no++;
		if (memchr(line, '\0', (size_t)len))
			return famfs_err_set(err, -EINVAL, "%s:%u: holds a NUL byte", name, no);
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		p = line + strspn(line, BLANKS);
		if (*p == '\0' || *p == '#')
			continue;
		if (l.n == FAMFS_BATCH_MAX)
			return famfs_err_set(err, -EINVAL, "%s:%u: more than %d files: a list is one batch of at most %d",
					     name, no, FAMFS_BATCH_MAX, FAMFS_BATCH_MAX);
		if (l.n == size) {
			size_t c = size ? size * 2 : 64;
			struct file_list_entry *v = realloc(l.v, c * sizeof(*v));

			if (!v)
				return famfs_err_set(err, -ENOMEM, "%s: out of memory", name);
			l.v = v;
			size = c;
		}
		r = parse_line(p, name, no, default_mode, &l.v[l.n], err);
		if (r < 0)
			return r;
		l.n++;
	}
	if (ferror(f))
		return famfs_err_set(err, -EIO, "%s: cannot read after line %u: %s", name, no, strerror(errno));
	*ret = l;
	l = (struct file_list){ 0 };
	return 0;
}

unsigned int file_list_line_of(const struct file_list *l, size_t index)
{
	return index < l->n ? l->v[index].line : 0;
}
