// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

/*
 * Length of the valid UTF-8 character at @p (at most @len bytes), or 0 when
 * the bytes there are not one.  Control characters are valid here; the
 * caller escapes them separately.
 */
static size_t utf8_char_len(const uint8_t *p, size_t len)
{
	uint32_t cp;
	size_t n;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (n > len)
		return 0;
	for (size_t k = 1; k < n; k++) {
		if ((p[k] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[k] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;         /* overlong, or beyond Unicode */
	if ((cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0xfdd0 && cp <= 0xfdef) ||
	    (cp & 0xfffe) == 0xfffe)
		return 0;         /* surrogates and noncharacters */
	return n;
}

static bool is_c1_control(const uint8_t *p, size_t n)
{
	return n == 2 && p[0] == 0xc2 && p[1] < 0xa0;
}

size_t famfs_escape(const char *in, size_t len, char *out, size_t out_size)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = (const uint8_t *)in;
	size_t o = 0;

	if (out_size == 0)
		return 0;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_char_len(p + i, len - i);
		size_t nesc;

		if (n == 1 && p[i] >= 0x20 && p[i] != 0x7f && p[i] != '\\') {
			if (o + 1 >= out_size)
				break;
			out[o++] = (char)p[i++];
			continue;
		}
		if (n > 1 && !is_c1_control(p + i, n)) {
			if (o + n >= out_size)
				break;
			memcpy(out + o, p + i, n);
			o += n;
			i += n;
			continue;
		}
		/* An invalid byte, a control character or the backslash: byte by byte. */
		nesc = n ? n : 1;
		if (o + 4 * nesc >= out_size)
			break;
		for (size_t k = 0; k < nesc; k++, i++) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[p[i] >> 4];
			out[o++] = hex[p[i] & 0xf];
		}
	}
	out[o] = '\0';
	return o;
}

char *famfs_escape_dup(const char *s)
{
	size_t len = strlen(s);
	char *out = malloc(FAMFS_ESCAPED_SIZE(len));

	if (out)
		famfs_escape(s, len, out, FAMFS_ESCAPED_SIZE(len));
	return out;
}

bool famfs_is_utf8(const char *s)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t len = strlen(s);

	for (size_t i = 0, n; i < len; i += n) {
		n = utf8_char_len(p + i, len - i);
		if (n == 0)
			return false;
	}
	return true;
}

bool famfs_needs_escape(const char *s)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t len = strlen(s);

	for (size_t i = 0; i < len;) {
		size_t n = utf8_char_len(p + i, len - i);

		if (n == 0 || (n == 1 && (p[i] < 0x20 || p[i] == 0x7f || p[i] == '\\')) ||
		    is_c1_control(p + i, n))
			return true;
		i += n;
	}
	return false;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The byte "\xHH" at @s stands for, or -1 when @s does not start one. */
static int escaped_byte(const char *s)
{
	int hi, lo;

	if (s[0] != '\\' || s[1] != 'x' || (hi = hex_value(s[2])) < 0 || (lo = hex_value(s[3])) < 0)
		return -1;
	return hi << 4 | lo;
}

int famfs_unescape(const char *in, char *out, size_t out_size, struct famfs_err *err)
{
	size_t need = 1, o = 0;

	for (size_t i = 0; in[i]; i++, need++) {
		int b = escaped_byte(in + i);

		if (b == 0)
			return famfs_err_set(err, -EINVAL,
					     "path \"%s\" holds an escaped NUL (\\x00): names cannot contain NUL",
					     in);
		if (b > 0)
			i += 3;
	}
	if (need > out_size)
		return famfs_err_set(err, -ENAMETOOLONG, "path \"%s\" is too long", in);
	for (size_t i = 0; in[i]; i++) {
		int b = escaped_byte(in + i);

		if (b > 0) {
			out[o++] = (char)b;
			i += 3;
		} else {
			out[o++] = in[i];
		}
	}
	out[o] = '\0';
	return 0;
}
