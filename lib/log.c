// SPDX-License-Identifier: LGPL-2.1-or-later
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "log.h"
#include "path.h"
#include "superblock.h"

uint32_t famfs_log_header_crc(const struct famfs_log_header *h)
{
	return famfs_crc32(h, FAMFS_LOG_HEADER_CRC_LEN);
}

uint32_t famfs_log_entry_crc(const struct famfs_log_entry *e)
{
	return famfs_crc32(e, FAMFS_LOG_ENTRY_CRC_LEN);
}

void famfs_log_format(void *log, uint64_t log_len)
{
	struct famfs_log_header *h = log;

	memset(log, 0, log_len);
	h->magic = FAMFS_LOG_MAGIC;
	h->len = log_len;
	h->last_index = famfs_log_slots(log_len) - 1;
	h->next_seqnum = 0;
	h->next_index = 0;
	h->crc = famfs_log_header_crc(h);
}

enum famfs_finding_code famfs_log_header_validate(const struct famfs_log_header *h,
						  uint64_t sb_log_len, struct famfs_err *err)
{
	uint32_t crc;

	if (h->magic != FAMFS_LOG_MAGIC) {
		famfs_err_set(err, -EINVAL, "log header: bad magic 0x%" PRIx64 " (expected 0x%" PRIx64 ")",
			      h->magic, FAMFS_LOG_MAGIC);
		return FAMFS_F_LOG_MAGIC;
	}
	crc = famfs_log_header_crc(h);
	if (h->crc != crc) {
		famfs_err_set(err, -EINVAL, "log header: CRC mismatch (stored 0x%" PRIx64 ", computed 0x%08x)",
			      h->crc, crc);
		return FAMFS_F_LOG_CRC;
	}
	if (h->len != sb_log_len) {
		famfs_err_set(err, -EINVAL, "log header: length 0x%" PRIx64
			      " differs from the superblock's 0x%" PRIx64, h->len, sb_log_len);
		return FAMFS_F_LOG_LEN;
	}
	if (h->last_index + 1 != famfs_log_slots(sb_log_len)) {
		famfs_err_set(err, -EINVAL, "log header: last index %" PRIu64
			      " does not match a log of 0x%" PRIx64 " bytes (expected %" PRIu64 ")",
			      h->last_index, sb_log_len, famfs_log_slots(sb_log_len) - 1);
		return FAMFS_F_LOG_LAST_INDEX;
	}
	if (h->next_index > h->last_index + 1) {
		famfs_err_set(err, -EINVAL, "log header: next index %" PRIu64
			      " is past the last slot %" PRIu64, h->next_index, h->last_index);
		return FAMFS_F_LOG_NEXT_INDEX;
	}
	if (h->next_seqnum != h->next_index) {
		famfs_err_set(err, -EINVAL, "log header: next seqnum %" PRIu64
			      " differs from next index %" PRIu64, h->next_seqnum, h->next_index);
		return FAMFS_F_LOG_NEXT_SEQNUM;
	}
	return FAMFS_OK;
}

enum famfs_finding_code famfs_log_entry_check_integrity(const struct famfs_log_entry *e,
							uint64_t index, struct famfs_err *err)
{
	uint32_t crc;

	if (e->seqnum != index) {
		famfs_err_set(err, -EINVAL, "log entry %" PRIu64 ": seqnum %" PRIu64 " does not match its index",
			      index, e->seqnum);
		return FAMFS_F_ENTRY_SEQNUM;
	}
	crc = famfs_log_entry_crc(e);
	if (e->crc != crc) {
		famfs_err_set(err, -EINVAL, "log entry %" PRIu64 ": CRC mismatch (stored 0x%" PRIx64
			      ", computed 0x%08x)", index, e->crc, crc);
		return FAMFS_F_ENTRY_CRC;
	}
	return FAMFS_OK;
}

/* Sums of extent lengths stop at UINT64_MAX: no file size can exceed that anyway. */
static uint64_t add_saturating(uint64_t a, uint64_t b)
{
	uint64_t sum;

	return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

static enum famfs_finding_code check_extent(const struct famfs_simple_extent *x, const char *what,
					    unsigned int n, const struct famfs_layout *l,
					    bool whole_units, struct famfs_err *err)
{
	uint64_t data_start = famfs_data_start(l->log_len);

	if (x->devindex != 0) {
		famfs_err_set(err, -EINVAL, "%s %u: device index %" PRIu64 " (only device 0 exists)",
			      what, n, x->devindex);
		return FAMFS_F_EXTENT_DEVINDEX;
	}
	if (x->offset == 0) {
		famfs_err_set(err, -EINVAL, "%s %u: offset 0 (the superblock)", what, n);
		return FAMFS_F_EXTENT_ZERO_OFFSET;
	}
	if (x->offset % FAMFS_ALLOC_UNIT) {
		famfs_err_set(err, -EINVAL, "%s %u: offset 0x%" PRIx64 " is not 2 MiB aligned",
			      what, n, x->offset);
		return FAMFS_F_EXTENT_ALIGN;
	}
	if (x->len == 0 || (whole_units && x->len % FAMFS_ALLOC_UNIT)) {
		famfs_err_set(err, -EINVAL, "%s %u: length 0x%" PRIx64 " is %s", what, n, x->len,
			      x->len == 0 ? "zero" : "not a multiple of 2 MiB");
		return FAMFS_F_EXTENT_LENGTH;
	}
	if (x->offset < data_start) {
		famfs_err_set(err, -EINVAL, "%s %u: offset 0x%" PRIx64
			      " is inside the superblock or log (data starts at 0x%" PRIx64 ")",
			      what, n, x->offset, data_start);
		return FAMFS_F_EXTENT_IN_METADATA;
	}
	if (x->offset >= l->dev_size || x->len > l->dev_size - x->offset) {
		famfs_err_set(err, -EINVAL, "%s %u: [0x%" PRIx64 ", +0x%" PRIx64
			      ") runs past the end of the device (0x%" PRIx64 " bytes)",
			      what, n, x->offset, x->len, l->dev_size);
		return FAMFS_F_EXTENT_BEYOND_DEVICE;
	}
	return FAMFS_OK;
}

enum famfs_finding_code famfs_fmap_check(const struct famfs_log_file_meta *fm,
					 const struct famfs_layout *l, struct famfs_err *err)
{
	enum famfs_finding_code c;
	uint64_t capacity = 0;

	if (fm->ext_type == FAMFS_EXT_SIMPLE) {
		if (fm->nextents < 1 || fm->nextents > FAMFS_MAX_SIMPLE_EXTENTS) {
			famfs_err_set(err, -EINVAL, "%u simple extents (allowed 1 to %d)",
				      fm->nextents, FAMFS_MAX_SIMPLE_EXTENTS);
			return FAMFS_F_EXTENT_COUNT;
		}
		for (unsigned int i = 0; i < fm->nextents; i++) {
			c = check_extent(&fm->se[i], "extent", i, l, false, err);
			if (c != FAMFS_OK)
				return c;
			capacity = add_saturating(capacity, fm->se[i].len);
		}
	} else if (fm->ext_type == FAMFS_EXT_INTERLEAVED) {
		const struct famfs_interleaved_extent *ie = &fm->ie[0];

		if (fm->nextents != FAMFS_MAX_INTERLEAVED_EXTENTS) {
			famfs_err_set(err, -EINVAL, "%u interleaved extents (allowed exactly 1)", fm->nextents);
			return FAMFS_F_EXTENT_COUNT;
		}
		if (ie->nstrips < 1 || ie->nstrips > FAMFS_MAX_STRIPS) {
			famfs_err_set(err, -EINVAL, "%" PRIu64 " strips (allowed 1 to %d)",
				      ie->nstrips, FAMFS_MAX_STRIPS);
			return FAMFS_F_STRIP_COUNT;
		}
		if (ie->chunk_size == 0 || ie->chunk_size % FAMFS_ALLOC_UNIT) {
			famfs_err_set(err, -EINVAL, "chunk size 0x%" PRIx64 " is not a non-zero multiple of 2 MiB",
				      ie->chunk_size);
			return FAMFS_F_CHUNK_SIZE;
		}
		for (unsigned int i = 0; i < ie->nstrips; i++) {
			c = check_extent(&ie->strips[i], "strip", i, l, false, err);
			if (c != FAMFS_OK)
				return c;
			if (ie->strips[i].len % ie->chunk_size) {
				famfs_err_set(err, -EINVAL, "strip %u: length 0x%" PRIx64
					      " is not a whole number of 0x%" PRIx64 "-byte chunks",
					      i, ie->strips[i].len, ie->chunk_size);
				return FAMFS_F_EXTENT_LENGTH;
			}
			capacity = add_saturating(capacity, ie->strips[i].len);
		}
	} else {
		famfs_err_set(err, -EINVAL, "unknown extent type %u", fm->ext_type);
		return FAMFS_F_EXTENT_TYPE;
	}
	if (fm->size > capacity) {
		famfs_err_set(err, -EINVAL, "size %" PRIu64 " exceeds the %" PRIu64 " bytes its extents give it",
			      fm->size, capacity);
		return FAMFS_F_FILE_SIZE;
	}
	return FAMFS_OK;
}

enum famfs_finding_code famfs_file_entry_check(const struct famfs_log_entry *e,
					       const struct famfs_layout *layout,
					       bool *ret_extents_sound, struct famfs_err *err)
{
	return famfs_file_meta_check(&e->file, e->file.relpath, layout, ret_extents_sound, err);
}

enum famfs_finding_code famfs_file_meta_check(const struct famfs_log_file_meta *fm, const char *relpath,
					      const struct famfs_layout *layout,
					      bool *ret_extents_sound, struct famfs_err *err)
{
	enum famfs_finding_code pc, mc;

	pc = famfs_path_check_field(relpath, err);
	/* The map is checked even under a bad path; the message is the first rule's. */
	mc = famfs_fmap_check(fm, layout, pc == FAMFS_OK ? err : NULL);
	if (ret_extents_sound)
		*ret_extents_sound = mc == FAMFS_OK || mc == FAMFS_F_FILE_SIZE;
	return pc != FAMFS_OK ? pc : mc;
}

enum famfs_finding_code famfs_log_entry_check_semantics(const struct famfs_log_entry *e,
							const struct famfs_layout *layout,
							struct famfs_err *err)
{
	switch (e->type) {
	case FAMFS_LOG_FILE:
		return famfs_file_entry_check(e, layout, NULL, err);
	case FAMFS_LOG_MKDIR:
		return famfs_path_check_field(e->mkdir.relpath, err);
	case FAMFS_LOG_ADD_DAXDEV:
		return FAMFS_OK;
	case FAMFS_LOG_DELETE:
		famfs_err_set(err, 0, "DELETE entry (never written by famfs) ignored");
		return FAMFS_F_DELETE_ENTRY;
	default:
		famfs_err_set(err, -EINVAL, "unknown entry type %u", e->type);
		return FAMFS_F_ENTRY_TYPE;
	}
}

uint64_t famfs_fmap_capacity(const struct famfs_fmap *map)
{
	uint64_t total = 0;

	if (map->ext_type == FAMFS_EXT_SIMPLE) {
		for (unsigned int i = 0; i < map->nextents && i < FAMFS_MAX_SIMPLE_EXTENTS; i++)
			total = add_saturating(total, map->se[i].len);
	} else {
		for (unsigned int i = 0; i < map->ie[0].nstrips && i < FAMFS_MAX_STRIPS; i++)
			total = add_saturating(total, map->ie[0].strips[i].len);
	}
	return total;
}

void famfs_entry_get_fmap(const struct famfs_log_entry *e, struct famfs_fmap *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->ext_type = e->file.ext_type;
	ret->nextents = e->file.nextents;
	memcpy(ret->ie, e->file.ie, sizeof(ret->ie));
}

const char *famfs_entry_relpath(const struct famfs_log_entry *e)
{
	switch (e->type) {
	case FAMFS_LOG_FILE:  return e->file.relpath;
	case FAMFS_LOG_MKDIR: return e->mkdir.relpath;
	default:              return NULL;
	}
}

int famfs_entry_make_file(struct famfs_log_entry *e, const char *relpath, uint64_t size,
			  uint32_t mode, uint32_t uid, uint32_t gid,
			  const struct famfs_fmap *map, struct famfs_err *err)
{
	if (famfs_path_check(relpath, err) != FAMFS_OK)
		return err ? err->code : -EINVAL;
	memset(e, 0, sizeof(*e));
	e->type = FAMFS_LOG_FILE;
	e->file.size = size;
	e->file.flags = FAMFS_FM_ALL_HOSTS_RW;
	e->file.uid = uid;
	e->file.gid = gid;
	e->file.mode = mode & 07777;
	strcpy(e->file.relpath, relpath);
	e->file.ext_type = map->ext_type;
	e->file.nextents = map->nextents;
	memcpy(e->file.ie, map->ie, sizeof(map->ie));
	return 0;
}

int famfs_entry_make_mkdir(struct famfs_log_entry *e, const char *relpath,
			   uint32_t mode, uint32_t uid, uint32_t gid, struct famfs_err *err)
{
	if (famfs_path_check(relpath, err) != FAMFS_OK)
		return err ? err->code : -EINVAL;
	memset(e, 0, sizeof(*e));
	e->type = FAMFS_LOG_MKDIR;
	e->mkdir.uid = uid;
	e->mkdir.gid = gid;
	e->mkdir.mode = mode & 07777;
	strcpy(e->mkdir.relpath, relpath);
	return 0;
}

uint64_t famfs_log_free_slots(const struct famfs_log_header *h)
{
	if (h->next_index > h->last_index + 1)
		return 0;
	return h->last_index + 1 - h->next_index;
}

int famfs_log_append(struct famfs_log_header *h, struct famfs_log_entry *entries,
		     size_t n, struct famfs_err *err)
{
	struct famfs_log_entry *slots = famfs_log_entries(h);
	uint64_t first = h->next_index;

	if (n > famfs_log_free_slots(h))
		return famfs_err_set(err, -FAMFS_ELOGFULL,
				     "log is full: %zu entries needed, %" PRIu64 " of %" PRIu64 " slots free",
				     n, famfs_log_free_slots(h), h->last_index + 1);
	for (size_t i = 0; i < n; i++) {
		entries[i].seqnum = first + i;
		entries[i].crc = famfs_log_entry_crc(&entries[i]);
	}
	memcpy(&slots[first], entries, n * sizeof(*entries));
	famfs_cache_flush(&slots[first], n * sizeof(*entries));

	h->next_seqnum = first + n;
	h->next_index = first + n;
	famfs_cache_flush(h, sizeof(*h));
	return 0;
}
