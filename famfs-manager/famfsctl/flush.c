// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * flush PATH...: writes a file's cache lines back to the medium, for a
 * writer whose stores other hosts must see when the shared memory is not
 * coherent between hosts.  Cache lines belong to the physical memory, not
 * to a mapping: flushing through a read-only mapping of the medium writes
 * back what any process on this host stored there.  The instruction is
 * libfamfs's (cache.h); a pmem or image mapping has its page cache written
 * out as well (msync).
 */
#include <stdio.h>

#include "cache.h"
#include "famfsctl.h"
#include "mapping.h"
#include "message.h"
#include "output.h"

static int flush_one(const char *path, struct flush_result *ret)
{
	_cleanup_(mapped_file_unmap) struct mapped_file m = { 0 };
	int r;

	/* A copy of the file would be no use: ask for the medium itself. */
	r = mapped_file_open(path, false, "device", &m);
	if (r < 0)
		return r;
	if (m.copy)
		return tool_error_errno(-EINVAL, "cannot flush %s: the daemon handed over a copy, not the medium", path);
	r = mapped_file_flush(&m, path);
	if (r < 0)
		return r;
	*ret = (struct flush_result){
		.size = m.l.size,
		.instruction = famfs_cache_flush_instruction(),
		.fence = famfs_cache_flush_fence(),
		.page_cache = !m.device_dax,
	};
	return 0;
}

int cmd_flush(int argc, char **argv)
{
	struct json_object *json = NULL;
	int r, failed = 0;

	if (argc < 2 || argv[1][0] == '-')
		return ctl_usage_error("usage: famfsctl flush PATH...");
	if (arg_json)
		json = json_list_new();
	for (int a = 1; a < argc; a++) {
		struct flush_result f;

		r = flush_one(argv[a], &f);
		if (r < 0) {
			failed = r;
			continue;
		}
		if (json)
			json_flush_list_add(json, argv[a], &f);
		else
			text_flush(argv[a], &f);
	}
	json_print(json);
	return failed < 0 ? failed : FAMFSCTL_OK;
}
