/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef FAMFS_TEST_BUS_CLIENT_H
#define FAMFS_TEST_BUS_CLIENT_H

/*
 * The program's "--client ..." mode: one call on the system bus of
 * DBUS_SYSTEM_BUS_ADDRESS, its outcome on the first line of stdout.
 */
int bus_client_main(int argc, char **argv);

#endif
