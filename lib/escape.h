/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Names on media are bytes: a famfs path may hold any byte but NUL, UTF-8
 * or not, control characters included (upstream's tools write them).
 * Whatever shows a name to a person (fsck.famfs, the daemon's log,
 * famfsctl) or puts it on D-Bus (whose strings must be valid UTF-8) passes
 * it through famfs_escape() first, which is reversible:
 *
 *   - a byte that is not part of a valid UTF-8 character (overlong forms,
 *     surrogates, code points above U+10FFFF and the noncharacters
 *     U+FDD0..U+FDEF, U+xFFFE and U+xFFFF count as invalid: sd-bus
 *     refuses them),
 *   - a control character: C0 (0x00-0x1f), DEL (0x7f) and the C1 controls
 *     U+0080..U+009F (each of their two bytes),
 *   - the backslash itself,
 *
 * become "\xHH" (two lowercase hex digits); everything else is copied.
 * famfs_unescape() turns every "\xHH" back into its byte and keeps any
 * other backslash as it is, so unescape(escape(name)) == name for every name.
 */
#ifndef FAMFS_ESCAPE_H
#define FAMFS_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* Room famfs_escape() needs for @len input bytes, NUL included. */
#define FAMFS_ESCAPED_SIZE(len) (4 * (len) + 1)

/*
 * Escapes @len bytes of @in into @out (@out_size bytes, NUL-terminated).
 * When @out is too small the output ends at the last whole character or
 * escape that fits.  Returns the length written.
 */
size_t famfs_escape(const char *in, size_t len, char *out, size_t out_size);

/* famfs_escape() of a C string into a new malloc()ed string; NULL without memory. */
char *famfs_escape_dup(const char *s);

/* True when @s is valid UTF-8 as sd-bus takes it (noncharacters excluded). */
bool famfs_is_utf8(const char *s);

/* True when famfs_escape() would change @s. */
bool famfs_needs_escape(const char *s);

/*
 * Reverses famfs_escape(): copies @in to @out (@out_size bytes) with every
 * "\xHH" turned back into its byte.  -EINVAL for an escaped NUL ("\x00"),
 * -ENAMETOOLONG when @out is too small; @out is untouched on failure.
 */
int famfs_unescape(const char *in, char *out, size_t out_size, struct famfs_err *err);

#endif
