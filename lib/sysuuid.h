/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The host's system UUID, which makes it the master of the file systems
 * whose superblock carries it.  Kept as text in /opt/famfs/system_uuid, the
 * file upstream famfs uses, so both tool sets agree on one host.
 */
#ifndef FAMFS_SYSUUID_H
#define FAMFS_SYSUUID_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

#define FAMFS_DEFAULT_SYSTEM_UUID_FILE "/opt/famfs/system_uuid"

/*
 * Reads the UUID from @file (NULL means the default).  When the file does
 * not exist and @create is set, a random UUID is written there first (the
 * directory 0755, the file 0444).
 */
int famfs_system_uuid_get(const char *file, bool create, uint8_t ret[16], struct famfs_err *err);

#endif
