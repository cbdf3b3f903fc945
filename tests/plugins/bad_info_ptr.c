/* A dlgauge_plugin_entry that returns a pointer to nothing ((void *)16):
 * reading the plugin info through it faults in dlgauge's own code. */
#include <dlgauge/plugin.h>

DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void);
DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void) { return (const dlg_plugin_info *)16; }
