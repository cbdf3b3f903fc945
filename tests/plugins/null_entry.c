/* Has the entry symbol, but it returns NULL. */
#include <dlgauge/plugin.h>

DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void);
DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void) { return NULL; }
