// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Interop with upstream famfs: every fixture of ../shared/interop/ that is
 * present (FAMFS_INTEROP_DIR) is decompressed once, sparsely, and
 *   check     - libfamfs's checker gives the verdict the fixture calls for
 *               (clean, or its one expected finding);
 *   fsck      - fsck.famfs exits 0 on good fixtures and 4 on damaged ones;
 *   superblock, log-header, entries
 *             - every field libfamfs decodes equals the manifest's value;
 *   contents  - each file's bytes, read through its extents (interleaved:
 *               chunk k in strip k % nstrips at (k / nstrips) * chunk),
 *               hash to the manifest's content_sha256_from_image.
 * A missing fixture folder skips its tests.
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "check.h"
#include "log.h"
#include "omf.h"
#include "superblock.h"

/* Mismatches printed per test; the rest are only counted. */
#define MAX_REPORTED 20

enum verdict {
	GOOD,
	BAD_SB_MAGIC,
	BAD_SB_CRC,
	BAD_ENTRY_CRC,
	BAD_LOG_CRC,
	CROSSLINK,
};

struct fixture_def {
	const char *name;
	const char *manifest;     /* file name inside the fixture folder */
	enum verdict verdict;
};

static const struct fixture_def fixtures[] = {
	{ "empty", "manifest.json", GOOD },
	{ "basic", "manifest.json", GOOD },
	{ "interleaved", "manifest.json", GOOD },
	{ "many", "manifest.json.zst", GOOD },
	{ "basic_bad_sb_magic", "manifest.json", BAD_SB_MAGIC },
	{ "basic_bad_sb_crc", "manifest.json", BAD_SB_CRC },
	{ "basic_bad_entry_crc", "manifest.json", BAD_ENTRY_CRC },
	{ "basic_bad_log_hdr_crc", "manifest.json", BAD_LOG_CRC },
	{ "basic_crosslink", "manifest.json", CROSSLINK },
};

/* The fixture currently decompressed; loaded by its first test. */
struct loaded {
	const struct fixture_def *def;
	bool ok;
	char *reason;             /* why it could not be loaded */
	char *tmpdir;
	char *image;
	int fd;
	uint8_t *base;
	uint64_t size;
	json_object *manifest;
	struct famfs_check_report *report;
};

static const char *interop_dir;
static const char *fsck_path;
static struct loaded cur = { .fd = -1 };
static unsigned mismatches;

static void mismatch(const char *fmt, ...) G_GNUC_PRINTF(1, 2);

static void mismatch(const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (mismatches++ < MAX_REPORTED) {
		va_start(ap, fmt);
		msg = g_strdup_vprintf(fmt, ap);
		va_end(ap);
		g_test_message("mismatch: %s", msg);
		g_free(msg);
	}
	g_test_fail();
}

static void unload(void)
{
	if (cur.report)
		famfs_check_report_free(cur.report);
	if (cur.base)
		munmap(cur.base, cur.size);
	if (cur.fd >= 0)
		close(cur.fd);
	if (cur.image)
		g_unlink(cur.image);
	if (cur.tmpdir)
		g_rmdir(cur.tmpdir);
	if (cur.manifest)
		json_object_put(cur.manifest);
	g_free(cur.image);
	g_free(cur.tmpdir);
	g_free(cur.reason);
	memset(&cur, 0, sizeof(cur));
	cur.fd = -1;
}

static bool run_zstd(const char *in, const char *out, char **ret_stdout, char **reason)
{
	const char *argv_file[] = { "zstd", "-q", "-d", "--sparse", "-f", in, "-o", out, NULL };
	const char *argv_pipe[] = { "zstd", "-q", "-d", "-c", in, NULL };
	GError *error = NULL;
	char *err_text = NULL;
	int status;

	if (!g_spawn_sync(NULL, (char **)(out ? argv_file : argv_pipe), NULL, G_SPAWN_SEARCH_PATH,
			  NULL, NULL, ret_stdout, &err_text, &status, &error)) {
		*reason = g_strdup_printf("cannot run zstd: %s", error->message);
		g_error_free(error);
		g_free(err_text);
		return false;
	}
	if (!g_spawn_check_wait_status(status, &error)) {
		*reason = g_strdup_printf("zstd -d %s failed: %s %s", in, error->message, err_text);
		g_error_free(error);
		g_free(err_text);
		return false;
	}
	g_free(err_text);
	return true;
}

/* Decompresses the fixture's image and manifest, maps the image, runs the checker. */
static bool load(const struct fixture_def *def)
{
	char *dir, *img_zst, *man;
	struct stat st;
	int r;

	if (cur.def == def)
		return cur.ok;
	unload();
	cur.def = def;

	dir = g_build_filename(interop_dir, def->name, NULL);
	img_zst = g_strdup_printf("%s/%s.img.zst", dir, def->name);
	man = g_build_filename(dir, def->manifest, NULL);
	if (!g_file_test(img_zst, G_FILE_TEST_EXISTS) || !g_file_test(man, G_FILE_TEST_EXISTS)) {
		cur.reason = g_strdup_printf("fixture %s is not present", dir);
		goto out;
	}
	cur.tmpdir = g_dir_make_tmp("famfs-interop-XXXXXX", NULL);
	if (!cur.tmpdir) {
		cur.reason = g_strdup("cannot make a temporary folder");
		goto out;
	}
	cur.image = g_build_filename(cur.tmpdir, "image", NULL);
	if (!run_zstd(img_zst, cur.image, NULL, &cur.reason))
		goto out;

	if (g_str_has_suffix(def->manifest, ".zst")) {
		char *text = NULL;

		if (!run_zstd(man, NULL, &text, &cur.reason))
			goto out;
		cur.manifest = json_tokener_parse(text);
		g_free(text);
	} else {
		cur.manifest = json_object_from_file(man);
	}
	if (!cur.manifest) {
		cur.reason = g_strdup_printf("cannot parse %s", man);
		goto out;
	}

	cur.fd = open(cur.image, O_RDONLY | O_CLOEXEC);
	if (cur.fd < 0 || fstat(cur.fd, &st) < 0 || st.st_size < 1) {
		cur.reason = g_strdup_printf("cannot open %s", cur.image);
		goto out;
	}
	cur.size = (uint64_t)st.st_size;
	cur.base = mmap(NULL, cur.size, PROT_READ, MAP_PRIVATE, cur.fd, 0);
	if (cur.base == MAP_FAILED) {
		cur.base = NULL;
		cur.reason = g_strdup_printf("cannot map %s: %s", cur.image, g_strerror(errno));
		goto out;
	}
	r = famfs_check_medium(cur.base, cur.size, 0, &cur.report);
	if (r < 0) {
		cur.reason = g_strdup_printf("famfs_check_medium: %s", g_strerror(-r));
		goto out;
	}
	cur.ok = true;
out:
	g_free(dir);
	g_free(img_zst);
	g_free(man);
	return cur.ok;
}

/* Loads the fixture of the test, or skips (absent) or fails (broken). */
static bool setup(const struct fixture_def *def)
{
	mismatches = 0;
	if (!load(def)) {
		if (cur.reason && strstr(cur.reason, "is not present"))
			g_test_skip(cur.reason);
		else
			g_test_fail_printf("%s", cur.reason ? cur.reason : "cannot load the fixture");
		return false;
	}
	return true;
}

/* ---- manifest access ---- */

static json_object *jget(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!o || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

/*
 * A number from the manifest: JSON integers, or strings "0x..." (magics and
 * CRCs) and "0o..." (modes).  Returns false when absent or not a number.
 */
static bool jnum(json_object *o, const char *key, uint64_t *ret)
{
	json_object *v = jget(o, key);
	const char *s;
	char *end;

	if (!v)
		return false;
	if (json_object_is_type(v, json_type_int)) {
		*ret = json_object_get_uint64(v);
		return true;
	}
	if (!json_object_is_type(v, json_type_string))
		return false;
	s = json_object_get_string(v);
	errno = 0;
	if (g_str_has_prefix(s, "0o"))
		*ret = strtoull(s + 2, &end, 8);
	else
		*ret = strtoull(s, &end, 0);
	return errno == 0 && end != s && *end == '\0';
}

static const char *jstr(json_object *o, const char *key)
{
	json_object *v = jget(o, key);

	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static void want_u64(const char *where, json_object *o, const char *key, uint64_t got)
{
	uint64_t want;

	if (!jnum(o, key, &want))
		mismatch("%s: manifest has no number \"%s\"", where, key);
	else if (got != want)
		mismatch("%s: %s is 0x%" PRIx64 " (%" PRIu64 "), manifest says 0x%" PRIx64 " (%" PRIu64 ")",
			 where, key, got, got, want, want);
}

static void want_str(const char *where, json_object *o, const char *key, const char *got)
{
	const char *want = jstr(o, key);

	if (!want)
		mismatch("%s: manifest has no string \"%s\"", where, key);
	else if (strcmp(got, want) != 0)
		mismatch("%s: %s is \"%s\", manifest says \"%s\"", where, key, got, want);
}

static void want_uuid(const char *where, json_object *o, const char *key, const uint8_t *uuid)
{
	char text[37];

	uuid_unparse_lower(uuid, text);
	want_str(where, o, key, text);
}

/* ---- tests ---- */

static size_t count_code(const struct famfs_check_report *r, enum famfs_finding_code code,
			 enum famfs_severity sev)
{
	size_t n = 0;

	for (size_t k = 0; k < r->nfindings; k++)
		if (r->findings[k].code == code && r->findings[k].severity == sev)
			n++;
	return n;
}

static void log_findings(const struct famfs_check_report *r)
{
	for (size_t k = 0; k < r->nfindings; k++)
		g_test_message("finding: %s [%s] %s", famfs_severity_name(r->findings[k].severity),
			       famfs_finding_name(r->findings[k].code), r->findings[k].message);
}

/* Whether a cross-link finding pairs @a and @b (in either order). */
static bool has_pair(const struct famfs_check_report *r, const char *a, const char *b)
{
	for (size_t k = 0; k < r->nfindings; k++) {
		const struct famfs_finding *f = &r->findings[k];

		if (f->code != FAMFS_F_CROSSLINK)
			continue;
		if ((strcmp(f->path, a) == 0 && strcmp(f->other_path, b) == 0) ||
		    (strcmp(f->path, b) == 0 && strcmp(f->other_path, a) == 0))
			return f->length > 0 && f->length % FAMFS_ALLOC_UNIT == 0;
	}
	return false;
}

static void count_types(uint64_t *files, uint64_t *dirs)
{
	json_object *entries = jget(cur.manifest, "entries");
	size_t n = entries ? json_object_array_length(entries) : 0;

	*files = *dirs = 0;
	for (size_t k = 0; k < n; k++) {
		const char *type = jstr(json_object_array_get_idx(entries, k), "type");

		if (type && strcmp(type, "FILE") == 0)
			(*files)++;
		else if (type && strcmp(type, "MKDIR") == 0)
			(*dirs)++;
	}
}

static void test_check(gconstpointer data)
{
	const struct fixture_def *def = data;
	const struct famfs_check_report *r;
	const struct famfs_check_summary *s;
	uint64_t files, dirs, used;
	size_t errors;

	if (!setup(def))
		return;
	r = cur.report;
	s = &r->summary;
	errors = famfs_check_report_errors(r);
	log_findings(r);
	count_types(&files, &dirs);

	switch (def->verdict) {
	case GOOD:
		g_assert_cmpuint(errors, ==, 0);
		g_assert_cmpuint(r->by_severity[FAMFS_SEV_WARNING], ==, 0);
		g_assert_false(r->repair.needed);
		g_assert_true(s->superblock_valid);
		g_assert_true(s->log_valid);
		g_assert_true(jnum(cur.manifest, "entries_used", &used));
		g_assert_cmpuint(s->log_used, ==, used);
		g_assert_cmpuint(s->files, ==, files);
		g_assert_cmpuint(s->directories, ==, dirs);
		g_assert_cmpuint(s->crosslinked_units, ==, 0);
		g_assert_cmpuint(s->bad_entries + s->rejected_entries, ==, 0);
		/* the full log says so, the others do not */
		g_assert_cmpuint(count_code(r, FAMFS_F_LOG_FULL, FAMFS_SEV_INFO), ==,
				 s->log_used == s->log_total ? 1 : 0);
		break;
	case BAD_SB_MAGIC:
		g_assert_cmpuint(errors, ==, 1);
		g_assert_cmpuint(count_code(r, FAMFS_F_SB_MAGIC, FAMFS_SEV_FATAL), ==, 1);
		g_assert_false(s->superblock_valid);
		break;
	case BAD_SB_CRC:
		g_assert_cmpuint(errors, ==, 1);
		g_assert_cmpuint(count_code(r, FAMFS_F_SB_CRC, FAMFS_SEV_FATAL), ==, 1);
		g_assert_false(s->superblock_valid);
		break;
	case BAD_LOG_CRC:
		g_assert_cmpuint(errors, ==, 1);
		g_assert_cmpuint(count_code(r, FAMFS_F_LOG_CRC, FAMFS_SEV_FATAL), ==, 1);
		g_assert_true(s->superblock_valid);
		g_assert_false(s->log_valid);
		break;
	case BAD_ENTRY_CRC:
		g_assert_cmpuint(errors, ==, 1);
		g_assert_cmpuint(count_code(r, FAMFS_F_ENTRY_CRC, FAMFS_SEV_ERROR), ==, 1);
		for (size_t k = 0; k < r->nfindings; k++)
			if (r->findings[k].code == FAMFS_F_ENTRY_CRC)
				g_assert_cmpint(r->findings[k].index, ==, 2);
		g_assert_cmpuint(s->bad_entries, ==, 1);
		/* the entry is in the middle: no tail to cut */
		g_assert_false(r->repair.needed);
		/* every other entry still counts */
		g_assert_cmpuint(s->files, ==, files - 1);
		g_assert_cmpuint(s->directories, ==, dirs);
		break;
	case CROSSLINK:
		g_assert_cmpuint(count_code(r, FAMFS_F_CROSSLINK, FAMFS_SEV_ERROR), ==, 2);
		g_assert_cmpuint(errors, ==, 2);
		g_assert_true(has_pair(r, "f4k", "f4k_clone"));
		g_assert_true(has_pair(r, "a/b/fb", "a/fb_clone"));
		g_assert_cmpuint(s->crosslinked_units, ==, 3);
		g_assert_false(r->repair.needed);
		break;
	}
}

static void test_fsck(gconstpointer data)
{
	const struct fixture_def *def = data;
	const char *argv[] = { fsck_path, "-n", "--json", NULL, NULL };
	GError *error = NULL;
	char *out = NULL, *err = NULL;
	json_object *report;
	int status;

	if (!fsck_path) {
		g_test_skip("FSCK_FAMFS is not set");
		return;
	}
	if (!setup(def))
		return;
	argv[3] = cur.image;
	g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, 0, NULL, NULL, &out, &err, &status, &error));
	g_assert_no_error(error);
	g_assert_true(WIFEXITED(status));
	g_assert_cmpint(WEXITSTATUS(status), ==, def->verdict == GOOD ? 0 : 4);
	report = json_tokener_parse(out);
	g_assert_nonnull(report);
	if (!report)
		g_test_message("fsck.famfs --json printed: %s", out);
	json_object_put(report);
	g_free(out);
	g_free(err);
}

static void test_superblock(gconstpointer data)
{
	const struct fixture_def *def = data;
	const struct famfs_superblock *sb;
	json_object *m;
	char name[FAMFS_DEVNAME_LEN + 1];

	if (!setup(def))
		return;
	m = jget(cur.manifest, "superblock");
	g_assert_nonnull(m);
	g_assert_cmpuint(cur.size, >=, sizeof(*sb));
	if (!m || cur.size < sizeof(*sb))
		return;
	sb = (const struct famfs_superblock *)cur.base;
	want_u64("image", cur.manifest, "image_file_size", cur.size);
	want_u64("superblock", m, "magic", sb->magic);
	want_u64("superblock", m, "version", sb->version);
	want_u64("superblock", m, "log_offset", sb->log_offset);
	want_u64("superblock", m, "log_len", sb->log_len);
	want_u64("superblock", m, "alloc_unit", sb->alloc_unit);
	want_u64("superblock", m, "omf_ver_major", sb->omf_major);
	want_u64("superblock", m, "omf_ver_minor", sb->omf_minor);
	want_uuid("superblock", m, "fs_uuid", sb->uuid);
	want_uuid("superblock", m, "dev_uuid", sb->dev_uuid);
	want_uuid("superblock", m, "system_uuid", sb->system_uuid);
	want_u64("superblock", m, "crc_stored", sb->crc);
	want_u64("superblock", m, "crc_computed_bytes_0_96", famfs_superblock_crc(sb));
	want_u64("superblock", m, "sb_flags", sb->flags);
	want_u64("superblock", m, "daxdev_size", sb->dev_size);
	memcpy(name, sb->dev_name, FAMFS_DEVNAME_LEN);
	name[FAMFS_DEVNAME_LEN] = '\0';
	want_str("superblock", m, "daxdev_name", name);
	/* every fixture was made on one host */
	want_str("superblock", m, "system_uuid", "f7c83d91-9f90-4a8e-ae2d-ac7a35d8cbcd");
}

static const struct famfs_log_header *header(void)
{
	if (cur.size < FAMFS_LOG_OFFSET + sizeof(struct famfs_log_header))
		return NULL;
	return (const struct famfs_log_header *)(cur.base + FAMFS_LOG_OFFSET);
}

static void test_log_header(gconstpointer data)
{
	const struct fixture_def *def = data;
	const struct famfs_log_header *h;
	json_object *m;

	if (!setup(def))
		return;
	m = jget(cur.manifest, "log_header");
	h = header();
	g_assert_nonnull(m);
	g_assert_nonnull(h);
	if (!m || !h)
		return;
	want_u64("log header", m, "magic", h->magic);
	want_u64("log header", m, "len", h->len);
	want_u64("log header", m, "last_index", h->last_index);
	want_u64("log header", m, "crc_stored", h->crc);
	want_u64("log header", m, "crc_computed_bytes_0_24", famfs_log_header_crc(h));
	want_u64("log header", m, "next_seqnum", h->next_seqnum);
	want_u64("log header", m, "next_index", h->next_index);
	want_u64("log", cur.manifest, "entries_used", h->next_index);
	want_u64("log", cur.manifest, "entries_total", famfs_log_slots(h->len));
}

static void check_extent_list(const char *where, json_object *list, const struct famfs_simple_extent *x,
			      uint64_t n)
{
	if (!list || !json_object_is_type(list, json_type_array)) {
		mismatch("%s: manifest has no extent list", where);
		return;
	}
	if (json_object_array_length(list) != n) {
		mismatch("%s: %" PRIu64 " extents, manifest lists %zu", where, n, json_object_array_length(list));
		return;
	}
	for (uint64_t k = 0; k < n; k++) {
		json_object *j = json_object_array_get_idx(list, k);
		char *w = g_strdup_printf("%s extent %" PRIu64, where, k);

		want_u64(w, j, "devindex", x[k].devindex);
		want_u64(w, j, "offset", x[k].offset);
		want_u64(w, j, "len", x[k].len);
		g_free(w);
	}
}

static void check_entry(uint64_t slot, json_object *j)
{
	const struct famfs_log_header *h = header();
	const struct famfs_log_entry *e = &((const struct famfs_log_entry *)(h + 1))[slot];
	uint32_t crc = famfs_log_entry_crc(e);
	json_object *crc_ok = jget(j, "crc_ok");
	char where[48];
	const char *type;
	struct famfs_fmap map;

	snprintf(where, sizeof(where), "entry %" PRIu64, slot);
	want_u64(where, j, "index", slot);
	want_u64(where, j, "seqnum", e->seqnum);
	want_u64(where, j, "crc_stored", e->crc);
	if (!crc_ok || json_object_get_boolean(crc_ok) != (crc == e->crc))
		mismatch("%s: CRC %s, manifest says crc_ok %s", where, crc == e->crc ? "matches" : "differs",
			 crc_ok ? json_object_to_json_string(crc_ok) : "(absent)");
	type = jstr(j, "type");
	if (!type) {
		mismatch("%s: manifest has no type", where);
		return;
	}
	switch (e->type) {
	case FAMFS_LOG_MKDIR:
		if (strcmp(type, "MKDIR") != 0) {
			mismatch("%s: MKDIR, manifest says %s", where, type);
			return;
		}
		want_str(where, j, "relpath", famfs_entry_relpath(e));
		want_u64(where, j, "mode", e->mkdir.mode);
		want_u64(where, j, "uid", e->mkdir.uid);
		want_u64(where, j, "gid", e->mkdir.gid);
		return;
	case FAMFS_LOG_FILE:
		if (strcmp(type, "FILE") != 0) {
			mismatch("%s: FILE, manifest says %s", where, type);
			return;
		}
		break;
	default:
		mismatch("%s: type %u, manifest says %s", where, e->type, type);
		return;
	}
	want_str(where, j, "relpath", famfs_entry_relpath(e));
	want_u64(where, j, "size", e->file.size);
	want_u64(where, j, "flags", e->file.flags);
	want_u64(where, j, "mode", e->file.mode);
	want_u64(where, j, "uid", e->file.uid);
	want_u64(where, j, "gid", e->file.gid);
	famfs_entry_get_fmap(e, &map);
	if (map.ext_type == FAMFS_EXT_SIMPLE) {
		want_str(where, j, "ext_type", "SIMPLE");
		want_u64(where, j, "nextents", map.nextents);
		if (map.nextents <= FAMFS_MAX_SIMPLE_EXTENTS)
			check_extent_list(where, jget(j, "extents"), map.se, map.nextents);
	} else if (map.ext_type == FAMFS_EXT_INTERLEAVED) {
		json_object *ie = jget(j, "interleaved");

		want_str(where, j, "ext_type", "INTERLEAVE");
		want_u64(where, j, "niext", map.nextents);
		want_u64(where, ie, "nstrips", map.ie[0].nstrips);
		want_u64(where, ie, "chunk_size", map.ie[0].chunk_size);
		if (map.ie[0].nstrips <= FAMFS_MAX_STRIPS)
			check_extent_list(where, jget(ie, "strips"), map.ie[0].strips, map.ie[0].nstrips);
	} else {
		mismatch("%s: extent type %u", where, map.ext_type);
	}
}

static void test_entries(gconstpointer data)
{
	const struct fixture_def *def = data;
	const struct famfs_log_header *h;
	json_object *entries;
	size_t n;

	if (!setup(def))
		return;
	entries = jget(cur.manifest, "entries");
	h = header();
	g_assert_nonnull(entries);
	g_assert_nonnull(h);
	if (!entries || !h)
		return;
	n = json_object_array_length(entries);
	g_assert_cmpuint(n, ==, h->next_index);
	g_assert_cmpuint(n, <=, famfs_log_slots(h->len));
	if (n > famfs_log_slots(h->len) ||
	    FAMFS_LOG_OFFSET + sizeof(*h) + n * sizeof(struct famfs_log_entry) > cur.size)
		return;
	for (size_t k = 0; k < n; k++)
		check_entry(k, json_object_array_get_idx(entries, k));
	if (mismatches > MAX_REPORTED)
		g_test_message("%u mismatches in all", mismatches);
}

/* Feeds @len bytes at @off to @sum; false when they lie outside the image. */
static bool hash_range(GChecksum *sum, uint64_t off, uint64_t len)
{
	if (off > cur.size || len > cur.size - off)
		return false;
	g_checksum_update(sum, cur.base + off, (gssize)len);
	return true;
}

/* The sha256 of a file's bytes read through its map, or NULL when it points outside the image. */
static char *file_sha256(const struct famfs_log_entry *e)
{
	GChecksum *sum = g_checksum_new(G_CHECKSUM_SHA256);
	uint64_t left = e->file.size;
	bool ok = true;
	char *hex;

	if (e->file.ext_type == FAMFS_EXT_SIMPLE) {
		for (uint32_t k = 0; ok && left > 0 && k < e->file.nextents && k < FAMFS_MAX_SIMPLE_EXTENTS; k++) {
			uint64_t n = MIN(left, e->file.se[k].len);

			ok = hash_range(sum, e->file.se[k].offset, n);
			left -= n;
		}
	} else {
		const struct famfs_interleaved_extent *ie = &e->file.ie[0];
		uint64_t chunk = ie->chunk_size, ns = ie->nstrips;

		ok = ns >= 1 && ns <= FAMFS_MAX_STRIPS && chunk > 0;
		for (uint64_t k = 0; ok && left > 0; k++) {
			const struct famfs_simple_extent *strip = &ie->strips[k % ns];
			uint64_t at = (k / ns) * chunk, n = MIN(left, chunk);

			if (at >= strip->len || n > strip->len - at) {
				ok = false;
				break;
			}
			ok = hash_range(sum, strip->offset + at, n);
			left -= n;
		}
	}
	ok = ok && left == 0;
	hex = ok ? g_strdup(g_checksum_get_string(sum)) : NULL;
	g_checksum_free(sum);
	return hex;
}

static void test_contents(gconstpointer data)
{
	const struct fixture_def *def = data;
	const struct famfs_log_header *h;
	json_object *entries;
	size_t n, checked = 0;

	if (!setup(def))
		return;
	entries = jget(cur.manifest, "entries");
	h = header();
	if (!entries || !h) {
		g_test_fail_printf("no entries or no log header");
		return;
	}
	n = json_object_array_length(entries);
	if (n > famfs_log_slots(h->len) ||
	    FAMFS_LOG_OFFSET + sizeof(*h) + n * sizeof(struct famfs_log_entry) > cur.size) {
		g_test_fail_printf("manifest lists %zu entries, more than the log holds", n);
		return;
	}
	for (size_t k = 0; k < n; k++) {
		json_object *j = json_object_array_get_idx(entries, k);
		const struct famfs_log_entry *e = &((const struct famfs_log_entry *)(h + 1))[k];
		const char *want = jstr(j, "content_sha256_from_image");
		char *got;

		if (!want)
			continue;
		if (e->type != FAMFS_LOG_FILE) {
			mismatch("entry %zu: has a content hash but is not a FILE", k);
			continue;
		}
		got = file_sha256(e);
		if (!got)
			mismatch("entry %zu (%s): its extents do not cover its size inside the image", k,
				 famfs_entry_relpath(e));
		else if (strcmp(got, want) != 0)
			mismatch("entry %zu (%s): sha256 %s, manifest says %s", k, famfs_entry_relpath(e), got, want);
		g_free(got);
		checked++;
	}
	g_test_message("%zu files hashed", checked);
	/* every fixture but the empty one has files */
	if (strcmp(def->name, "empty") != 0)
		g_assert_cmpuint(checked, >, 0);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		GTestDataFunc fn;
	} tests[] = {
		{ "check", test_check },
		{ "fsck", test_fsck },
		{ "superblock", test_superblock },
		{ "log-header", test_log_header },
		{ "entries", test_entries },
		{ "contents", test_contents },
	};
	int r;

	g_test_init(&argc, &argv, NULL);
	g_test_set_nonfatal_assertions();
	interop_dir = g_getenv("FAMFS_INTEROP_DIR");
	fsck_path = g_getenv("FSCK_FAMFS");
	if (!interop_dir || !g_file_test(interop_dir, G_FILE_TEST_IS_DIR)) {
		/* a TAP skip: meson counts a non-zero exit of a TAP test as an error */
		g_print("1..0 # SKIP no interop fixtures (FAMFS_INTEROP_DIR=%s)\n",
			interop_dir ? interop_dir : "unset");
		return 0;
	}
	for (size_t f = 0; f < G_N_ELEMENTS(fixtures); f++) {
		for (size_t t = 0; t < G_N_ELEMENTS(tests); t++) {
			char *path = g_strdup_printf("/interop/%s/%s", fixtures[f].name, tests[t].name);

			g_test_add_data_func(path, &fixtures[f], tests[t].fn);
			g_free(path);
		}
	}
	r = g_test_run();
	unload();
	return r;
}
