/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FAMFS_MANAGER_SYSTEMD_RESTART_H
#define FAMFS_MANAGER_SYSTEMD_RESTART_H

#include <stdbool.h>

/* True when systemd is restarting this daemon's unit (systemd-restart.c). */
bool systemd_restart_pending(void);

#endif
