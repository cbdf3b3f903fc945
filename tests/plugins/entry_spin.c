/* A dlgauge_plugin_entry that never returns (a busy loop): dlgauge names
 * the file in one line and exits 2 once DLGAUGE_PLUGIN_LOAD_TIMEOUT
 * passes, where every command used to hang. */
#include <dlgauge/plugin.h>

DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void);
DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void)
{
    for (volatile unsigned long i = 0;; i++) {
    }
}
