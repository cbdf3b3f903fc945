/* The host's collectives (dlg_host.comm_*), see host_comm.c. */
#ifndef DLG_HOST_COMM_H
#define DLG_HOST_COMM_H

#include <dlgauge/plugin.h>

/* Sets the comm_* members of a host being built. */
void dlg_host_comm_fill(dlg_host *p);

#endif
