/* A dlgauge_plugin_entry that calls abort() (a failed assert): its pc is
 * libc's, which may hold a lock, so dlgauge names the file in one line
 * and exits 2, not a bare "Aborted" (exit 134). */
#include <dlgauge/plugin.h>

#include <stdlib.h>
DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void);
DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void) { abort(); }
