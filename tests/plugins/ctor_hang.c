/* A plugin whose static constructor never returns (it waits for a lock or
 * a device forever): dlopen never returns either, so dlgauge names the
 * file in one line and exits 2 once DLGAUGE_PLUGIN_LOAD_TIMEOUT passes,
 * where every command used to hang. */
#include <dlgauge/plugin.h>

#include <unistd.h>
__attribute__((constructor)) static void hang_at_load(void)
{
    for (;;)
        pause();
}

DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void);
DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void) { return NULL; }
