/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Scope-bound cleanup, in systemd's idiom: a variable declared
 * `_cleanup_free_ char *p = NULL;` is freed when it goes out of scope, and
 * TAKE_PTR(p) / TAKE_FD(fd) hand ownership on (leaving NULL / -1 behind).
 * Every free function used here accepts NULL (or a negative fd).
 */
#ifndef FAMFS_CLEANUP_H
#define FAMFS_CLEANUP_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

/* Defines static inline void NAME##p(TYPE *p) calling FUNC(*p) when *p is set. */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)			\
	static inline void func##p(type *p)			\
	{							\
		if (*p)						\
			func(*p);				\
	}

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)

#define TAKE_PTR(p)					\
	({						\
		__typeof__(p) _taken = (p);		\
		(p) = NULL;				\
		_taken;					\
	})

#define TAKE_FD(fd)					\
	({						\
		int _taken_fd = (fd);			\
		(fd) = -1;				\
		_taken_fd;				\
	})

#endif
