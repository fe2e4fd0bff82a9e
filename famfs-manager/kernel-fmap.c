// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The maps famfs.ko is given and gives back: the MAP_CREATE_V2 argument
 * built from a log entry (or, for the .meta files, from one extent), and
 * the comparison of what MAP_GET_V2 returned with what the log says.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "kernel.h"

void kernel_fmap_fix_pointers(struct kernel_fmap *m)
{
	if (m->fmap.fioc_ext_type == FAMFS_IOC_EXT_INTERLEAVE) {
		m->fmap.kie = &m->ie;
		m->ie.ie_strips = m->strips;
	} else {
		m->fmap.kse = m->se;
	}
}

void kernel_fmap_meta(uint32_t file_type, uint64_t offset, uint64_t len, struct kernel_fmap *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->fmap.fioc_file_size = len;
	ret->fmap.fioc_file_type = file_type;
	ret->fmap.fioc_ext_type = FAMFS_IOC_EXT_SIMPLE;
	ret->fmap.fioc_nextents = 1;
	ret->se[0].offset = offset;
	ret->se[0].len = len;
	kernel_fmap_fix_pointers(ret);
}

int kernel_fmap_from_entry(const struct famfs_log_entry *e, struct kernel_fmap *ret,
			   struct famfs_err *err)
{
	const struct famfs_log_file_meta *fm = &e->file;

	memset(ret, 0, sizeof(*ret));
	if (e->type != FAMFS_LOG_FILE)
		return famfs_err_set(err, -EINVAL, "log entry of type %" PRIu32 " is not a file", e->type);
	ret->fmap.fioc_file_size = fm->size;
	ret->fmap.fioc_file_type = FAMFS_REG;
	if (fm->ext_type == FAMFS_EXT_SIMPLE) {
		if (fm->nextents < 1 || fm->nextents > FAMFS_IOC_MAX_SIMPLE_EXTENTS)
			return famfs_err_set(err, -EINVAL, "%" PRIu32 " simple extents (1 to %d)",
					     fm->nextents, FAMFS_IOC_MAX_SIMPLE_EXTENTS);
		ret->fmap.fioc_ext_type = FAMFS_IOC_EXT_SIMPLE;
		ret->fmap.fioc_nextents = fm->nextents;
		for (uint32_t i = 0; i < fm->nextents; i++) {
			ret->se[i].devindex = fm->se[i].devindex;
			ret->se[i].offset = fm->se[i].offset;
			ret->se[i].len = fm->se[i].len;
		}
	} else if (fm->ext_type == FAMFS_EXT_INTERLEAVED) {
		const struct famfs_interleaved_extent *ie = &fm->ie[0];
		uint64_t min_len = UINT64_MAX;

		if (fm->nextents != 1)
			return famfs_err_set(err, -EINVAL, "%" PRIu32 " interleaved extents (only 1)",
					     fm->nextents);
		if (ie->nstrips < 1 || ie->nstrips > FAMFS_MAX_STRIPS || ie->chunk_size == 0)
			return famfs_err_set(err, -EINVAL, "interleaved extent with %" PRIu64
					     " strips and chunk %" PRIu64, ie->nstrips, ie->chunk_size);
		ret->fmap.fioc_ext_type = FAMFS_IOC_EXT_INTERLEAVE;
		ret->fmap.fioc_niext = 1;
		ret->ie.ie_nstrips = ie->nstrips;
		ret->ie.ie_chunk_size = ie->chunk_size;
		for (uint64_t j = 0; j < ie->nstrips; j++) {
			ret->strips[j].devindex = ie->strips[j].devindex;
			ret->strips[j].offset = ie->strips[j].offset;
			ret->strips[j].len = ie->strips[j].len;
			if (ie->strips[j].len < min_len)
				min_len = ie->strips[j].len;
		}
		/* Round robin: the shortest strip bounds what the extent holds. */
		if (min_len > UINT64_MAX / ie->nstrips)
			return famfs_err_set(err, -EINVAL, "interleaved extent too large");
		ret->ie.ie_nbytes = min_len / ie->chunk_size * ie->chunk_size * ie->nstrips;
	} else {
		return famfs_err_set(err, -EINVAL, "unknown extent type %" PRIu32, fm->ext_type);
	}
	kernel_fmap_fix_pointers(ret);
	return 0;
}

int kernel_fmap_compare(const struct famfs_ioc_get_fmap *got, const struct kernel_fmap *want,
			struct famfs_err *err)
{
	const struct famfs_ioc_fmap *g = &got->iocmap, *w = &want->fmap;

	if (g->fioc_file_size != w->fioc_file_size)
		return famfs_err_set(err, -EILSEQ, "size %llu in the kernel, %llu in the log",
				     (unsigned long long)g->fioc_file_size,
				     (unsigned long long)w->fioc_file_size);
	if (g->fioc_file_type != w->fioc_file_type)
		return famfs_err_set(err, -EILSEQ, "file type %u in the kernel, %u expected",
				     g->fioc_file_type, w->fioc_file_type);
	if (g->fioc_ext_type != w->fioc_ext_type)
		return famfs_err_set(err, -EILSEQ, "extent type %u in the kernel, %u in the log",
				     g->fioc_ext_type, w->fioc_ext_type);
	if (w->fioc_ext_type == FAMFS_IOC_EXT_SIMPLE) {
		if (g->fioc_nextents != w->fioc_nextents)
			return famfs_err_set(err, -EILSEQ, "%u extents in the kernel, %u in the log",
					     g->fioc_nextents, w->fioc_nextents);
		if (w->fioc_nextents > FAMFS_MAX_EXTENTS)
			return famfs_err_set(err, -E2BIG, "%u extents: more than MAP_GET_V2 reports",
					     w->fioc_nextents);
		for (uint32_t i = 0; i < w->fioc_nextents; i++)
			if (got->ikse[i].offset != want->se[i].offset || got->ikse[i].len != want->se[i].len)
				return famfs_err_set(err, -EILSEQ,
						     "extent %u is 0x%llx+0x%llx in the kernel, 0x%llx+0x%llx in the log",
						     i, (unsigned long long)got->ikse[i].offset,
						     (unsigned long long)got->ikse[i].len,
						     (unsigned long long)want->se[i].offset,
						     (unsigned long long)want->se[i].len);
		return 0;
	}
	if (g->fioc_niext != 1)
		return famfs_err_set(err, -EILSEQ, "%u interleaved extents in the kernel, 1 in the log",
				     g->fioc_niext);
	if (got->ks.ikie.ie_nstrips != want->ie.ie_nstrips ||
	    got->ks.ikie.ie_chunk_size != want->ie.ie_chunk_size ||
	    got->ks.ikie.ie_nbytes != want->ie.ie_nbytes)
		return famfs_err_set(err, -EILSEQ,
				     "interleave %llu strips, chunk 0x%llx, 0x%llx bytes in the kernel; %llu, 0x%llx, 0x%llx from the log",
				     (unsigned long long)got->ks.ikie.ie_nstrips,
				     (unsigned long long)got->ks.ikie.ie_chunk_size,
				     (unsigned long long)got->ks.ikie.ie_nbytes,
				     (unsigned long long)want->ie.ie_nstrips,
				     (unsigned long long)want->ie.ie_chunk_size,
				     (unsigned long long)want->ie.ie_nbytes);
	for (uint64_t j = 0; j < want->ie.ie_nstrips && j < FAMFS_MAX_STRIPS; j++)
		if (got->ks.kie_strips[j].offset != want->strips[j].offset ||
		    got->ks.kie_strips[j].len != want->strips[j].len)
			return famfs_err_set(err, -EILSEQ,
					     "strip %llu is 0x%llx+0x%llx in the kernel, 0x%llx+0x%llx in the log",
					     (unsigned long long)j,
					     (unsigned long long)got->ks.kie_strips[j].offset,
					     (unsigned long long)got->ks.kie_strips[j].len,
					     (unsigned long long)want->strips[j].offset,
					     (unsigned long long)want->strips[j].len);
	return 0;
}
