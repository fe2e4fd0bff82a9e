// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The daemon's configuration file (famfs-manager/config.c config_load) on
 * arbitrary bytes.  Properties: no crash or leak; a refused file leaves a
 * message that names the file.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-common.h"
#include "manager-config.h"

static int fd = -1;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct manager_config c;
	struct famfs_err err = {0};
	int r;

	if (fd < 0)
		fd = fuzz_memfd("fuzz-config", path, sizeof(path));
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		fuzz_fail("cannot write the config file: %m");
	config_init(&c);
	r = config_load(&c, path, true, &err);
	if (r < 0 && r != -ENOMEM && strstr(err.msg, path) == NULL)
		fuzz_fail("config refused (%d) with a message that does not name the file: \"%s\"", r, err.msg);
	if (r == 0 && c.poll_ms == 0)
		fuzz_fail("config accepted with a poll interval of 0");
	config_free(&c);
	return 0;
}
