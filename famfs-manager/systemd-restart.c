// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Whether the SIGTERM that stops the daemon is half of a `systemctl
 * restart`.  A stop unmounts every famfs this daemon mounted; a restart
 * leaves them, as a crash would, so that the next instance adopts them and
 * programs keep their mappings.  systemd says which it is: while the stop
 * half runs, the unit's queued job is of type "restart" (or "try-restart");
 * for a plain stop, a shutdown or a removal, it is "stop" or none.
 */
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-login.h>

#include "logging.h"
#include "systemd-restart.h"

#define SYSTEMD_NAME "org.freedesktop.systemd1"

bool systemd_restart_pending(void)
{
	sd_bus *bus = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	char *unit = NULL, *job_type = NULL;
	const char *unit_path, *job_path;
	uint32_t job_id = 0;
	bool restart = false;

	if (sd_pid_get_unit(0, &unit) < 0)
		return false; /* not a systemd service: stopping means stopping */
	/*
	 * A connection of its own: the server's is closed once the event loop
	 * has exited.  A stuck systemd must not hold the shutdown up.
	 */
	if (sd_bus_open_system(&bus) < 0) {
		log_warning("cannot ask systemd whether %s is restarting (no system bus); unmounting as for a stop",
			    unit);
		free(unit);
		return false;
	}
	(void)sd_bus_set_method_call_timeout(bus, 2 * 1000 * 1000);
	if (sd_bus_call_method(bus, SYSTEMD_NAME, "/org/freedesktop/systemd1",
			       SYSTEMD_NAME ".Manager", "GetUnit", &e, &reply, "s", unit) < 0 ||
	    sd_bus_message_read(reply, "o", &unit_path) < 0)
		goto out;
	unit_path = strdupa(unit_path);
	reply = sd_bus_message_unref(reply);
	if (sd_bus_get_property(bus, SYSTEMD_NAME, unit_path, SYSTEMD_NAME ".Unit", "Job",
				&e, &reply, "(uo)") < 0 ||
	    sd_bus_message_read(reply, "(uo)", &job_id, &job_path) < 0 || job_id == 0)
		goto out;
	if (sd_bus_get_property_string(bus, SYSTEMD_NAME, job_path, SYSTEMD_NAME ".Job", "JobType",
				       &e, &job_type) < 0)
		goto out;
	restart = !strcmp(job_type, "restart") || !strcmp(job_type, "try-restart");
out:
	if (sd_bus_error_is_set(&e))
		log_warning("cannot ask systemd whether %s is restarting (%s); unmounting as for a stop",
			    unit, e.message);
	sd_bus_error_free(&e);
	sd_bus_message_unref(reply);
	free(job_type);
	free(unit);
	sd_bus_flush_close_unref(bus);
	return restart;
}
