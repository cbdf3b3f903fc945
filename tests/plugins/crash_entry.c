/* A dlgauge_plugin_entry that dies of SIGSEGV (a NULL read): loading it
 * must name the file, and the other plugins of its folder still load. */
#include <dlgauge/plugin.h>

DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void);
DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void)
{
    volatile int *p = 0;
    return (const dlg_plugin_info *)(long)*p;
}
