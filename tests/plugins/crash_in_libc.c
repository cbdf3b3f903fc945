/* A dlgauge_plugin_entry that faults inside libc (snprintf of a pointer
 * to nothing), where a lock of libc may be held: dlgauge cannot go on
 * safely, so it says so in one line and exits 2, not a bare SIGSEGV. */
#include <dlgauge/plugin.h>

#include <stdio.h>
DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void);
DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void)
{
    static char buf[64];
    const char *volatile bad = (const char *)16;
    snprintf(buf, sizeof buf, "%s", bad);
    return (const dlg_plugin_info *)buf;
}
