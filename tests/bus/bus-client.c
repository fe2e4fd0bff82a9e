// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The test program as a bus client, run as another uid through setpriv by
 * test-bus-auth: one OpenFile, WriteFile or other call, its outcome printed
 * as one line ("ok ..." or "error NAME: MESSAGE").
 */
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bus-client.h"
#include "bus-fixture.h"

static int client_error(sd_bus_error *e, int r)
{
	if (sd_bus_error_is_set(e))
		printf("error %s: %s\n", e->name, e->message);
	else
		printf("error errno: %s\n", strerror(-r));
	sd_bus_error_free(e);
	return 1;
}

/*
 * open PATH DESCRIPTOR WRITABLE: OpenFile, then what the descriptor is:
 * its st_size, access mode and seals, the first 8 bytes at offset 0 of it
 * (head=) and the first 8 bytes of the file through the returned map (data=).
 */
static int client_open(sd_bus *bus, const char *path, const char *descriptor, bool writable)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	uint64_t size, chunk, devindex, off, len;
	uint8_t head[8] = {0}, *map;
	uint32_t type;
	struct stat st;
	int fd, r;

	/* "auto" as the caller that gives no option, as famfsctl does */
	if (!strcmp(descriptor, "auto"))
		r = manager_call(bus, "OpenFile", &e, &reply, "sa{sv}", path, 1, "writable",
				 "b", writable);
	else
		r = manager_call(bus, "OpenFile", &e, &reply, "sa{sv}", path, 2, "writable",
				 "b", writable, "descriptor", "s", descriptor);
	if (r < 0)
		return client_error(&e, r);
	if (sd_bus_message_read(reply, "htut", &fd, &size, &type, &chunk) < 0 ||
	    sd_bus_message_read(reply, "a(ttt)", 1, &devindex, &off, &len) < 0)
		r = -EBADMSG;
	else if (fstat(fd, &st) < 0 || pread(fd, head, sizeof(head), 0) < 0)
		r = -errno;
	else if ((map = mmap(NULL, 8, PROT_READ, MAP_SHARED, fd, (off_t)off)) == MAP_FAILED)
		r = -errno;
	if (r < 0) {
		sd_bus_message_unref(reply);
		return client_error(&e, r);
	}
	printf("ok size=%" PRIu64 " st_size=%" PRIu64 " accmode=%s seals=%#x write=%s head=", size,
	       (uint64_t)st.st_size, (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDONLY ? "ro" : "rw",
	       (unsigned)fcntl(fd, F_GET_SEALS), pwrite(fd, "x", 1, 0) == 1 ? "yes" : "no");
	for (size_t i = 0; i < 8; i++)
		printf("%02x", head[i]);
	printf(" data=");
	for (size_t i = 0; i < 8; i++)
		printf("%02x", map[i]);
	printf("\n");
	munmap(map, 8);
	sd_bus_message_unref(reply);
	return 0;
}

/* write PATH SIZE SEALED: WriteFile of SIZE bytes 'w' from a memfd, sealed or not. */
static int client_write(sd_bus *bus, const char *path, size_t size, bool sealed)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	char *buf = g_malloc(size);
	int fd = memfd_create("client", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	uint64_t written = 0;
	int r;

	memset(buf, 'w', size);
	r = fd >= 0 && write(fd, buf, size) == (ssize_t)size &&
	    (!sealed || fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW) == 0) ? 0 : -errno;
	g_free(buf);
	if (r < 0)
		return client_error(&e, r);
	r = manager_call(bus, "WriteFile", &e, &reply, "sha{sv}", path, fd, 0);
	close(fd);
	if (r < 0)
		return client_error(&e, r);
	(void)sd_bus_message_read(reply, "t", &written);
	printf("ok written=%" PRIu64 "\n", written);
	sd_bus_message_unref(reply);
	return 0;
}

/* call METHOD ARGS...: one call, "ok" or "error NAME: MESSAGE". */
static int client_call(sd_bus *bus, int argc, char **argv)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *method = argv[0];
	int r;

	if (!strcmp(method, "GetFileMap") || !strcmp(method, "GetFileLayout") || !strcmp(method, "ListFiles"))
		r = manager_call(bus, method, &e, &reply, "s", argv[1]);
	else if (!strcmp(method, "Check"))
		r = manager_call(bus, method, &e, &reply, "sa{sv}", argv[1], 0);
	else if (!strcmp(method, "Replay"))
		r = manager_call(bus, method, &e, &reply, "");
	else if (!strcmp(method, "FsCheck"))
		r = sd_bus_call_method(bus, FAMFS_BUS_NAME, argv[1], FAMFS_FS_IFACE, "Check", &e, &reply, "a{sv}",
				       0);
	else if (!strcmp(method, "FsReplay"))
		r = sd_bus_call_method(bus, FAMFS_BUS_NAME, argv[1], FAMFS_FS_IFACE, "Replay", &e, &reply, "");
	else if (!strcmp(method, "Attach") || !strcmp(method, "Format"))   /* DEVICE */
		r = manager_call(bus, method, &e, &reply, "sa{sv}", argv[1], 0);
	else if (!strcmp(method, "Reload"))
		r = manager_call(bus, method, &e, &reply, "");
	else if (!strcmp(method, "SetAutomount"))                          /* UUID */
		r = manager_call(bus, method, &e, &reply, "sb", argv[1], 0);
	else if (!strcmp(method, "FsDetach") || !strcmp(method, "FsRepair"))   /* OBJECT */
		r = sd_bus_call_method(bus, FAMFS_BUS_NAME, argv[1], FAMFS_FS_IFACE, method + 2, &e, &reply,
				       "a{sv}", 0);
	else if (!strcmp(method, "JobCancel"))                             /* JOB */
		r = sd_bus_call_method(bus, FAMFS_BUS_NAME, argv[1], FAMFS_JOB_IFACE, "Cancel", &e, &reply, "");
	else if (!strcmp(method, "ListFileSystems"))
		r = manager_call(bus, method, &e, &reply, "");
	else if (!strcmp(method, "CreateFile") && argc == 5)   /* PATH MODE UID GID */
		r = manager_call(bus, method, &e, &reply, "stua{sv}", argv[1],
				 (uint64_t)4096, (uint32_t)strtoul(argv[2], NULL, 8), 2, "uid", "u",
				 (uint32_t)atoi(argv[3]), "gid", "u", (uint32_t)atoi(argv[4]));
	else if (!strcmp(method, "CreateFiles") && argc == 3)  /* PATH MODE */
		r = manager_call(bus, method, &e, &reply, "a(stu)a{sv}", 1, argv[1],
				 (uint64_t)4096, (uint32_t)strtoul(argv[2], NULL, 8), 0);
	else if (!strcmp(method, "Mkdir") && argc == 5)        /* PATH MODE UID GID */
		r = manager_call(bus, method, &e, &reply, "sua{sv}", argv[1],
				 (uint32_t)strtoul(argv[2], NULL, 8), 2, "uid", "u", (uint32_t)atoi(argv[3]),
				 "gid", "u", (uint32_t)atoi(argv[4]));
	else {
		printf("error usage: unknown call %s\n", method);
		return 2;
	}
	if (r < 0)
		return client_error(&e, r);
	sd_bus_message_unref(reply);
	printf("ok\n");
	return 0;
}

int bus_client_main(int argc, char **argv)
{
	sd_bus *bus = NULL;
	int r;

	/* Unbuffered: a sanitizer that ends the process must not lose the answer */
	setvbuf(stdout, NULL, _IONBF, 0);
	if (sd_bus_open_system(&bus) < 0) {
		printf("error errno: cannot connect to the bus\n");
		return 1;
	}
	if (argc == 4 && !strcmp(argv[0], "open"))
		r = client_open(bus, argv[1], argv[2], !strcmp(argv[3], "1"));
	else if (argc == 4 && !strcmp(argv[0], "write"))
		r = client_write(bus, argv[1], strtoul(argv[2], NULL, 10), !strcmp(argv[3], "1"));
	else if (argc >= 1 && !strcmp(argv[0], "call"))
		r = client_call(bus, argc - 1, argv + 1);
	else {
		printf("error usage: --client open PATH DESCRIPTOR WRITABLE | --client call METHOD ARGS...\n");
		r = 2;
	}
	sd_bus_flush_close_unref(bus);
	return r;
}
