/* A plugin whose static constructor calls abort() (a failed assert) while
 * dlopen runs it: one line naming the file and exit 2. */
#include <dlgauge/plugin.h>

#include <stdlib.h>
__attribute__((constructor)) static void abort_at_load(void) { abort(); }

DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void);
DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void) { return NULL; }
