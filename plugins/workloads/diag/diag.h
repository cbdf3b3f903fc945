/* The diag plugin's workloads: runner and machine diagnostics. */
#ifndef DLG_DIAG_H
#define DLG_DIAG_H

#include <dlgauge/plugin.h>
#include <stddef.h>

extern const dlg_plugin_desc stream_desc; /* STREAM memory bandwidth */
extern const dlg_plugin_desc sleep_desc;  /* timed sleeps: runner accuracy */
extern const dlg_plugin_desc noop_desc;   /* an empty step: runner overhead */

#endif
