/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Devices that come and go: the udev watch (udev-monitor.h) reports add,
 * change and remove here; this reads the device's first bytes to tell
 * famfs from everything else, and hands what it finds to the manager
 * core's one attach path, or detaches safely what disappeared.
 */
#ifndef FAMFS_MANAGER_HOTPLUG_H
#define FAMFS_MANAGER_HOTPLUG_H

#include <stdbool.h>

struct manager;

/* Starts the udev watch (when configured) and coldplugs. */
int hotplug_start(struct manager *m);
void hotplug_stop(struct manager *m);

/*
 * @devnode appeared or changed (@coldplug: it was there at start): attach
 * what it now holds, keep it, or detach what it no longer holds.
 */
void hotplug_device_added(struct manager *m, const char *devnode, bool coldplug);
void hotplug_device_removed(struct manager *m, const char *devnode);

/*
 * Drops the page cache of a pmem block device (no-op for anything else):
 * pages cached at the last attach still hold the old superblock and log.
 */
void hotplug_drop_page_cache(const char *devnode);

#endif
