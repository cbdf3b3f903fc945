/* A plugin info whose descriptor list is NULL (a hand-written entry, not
 * DLG_PLUGIN): refused as such, not as a malformed struct_size. */
#include <dlgauge/plugin.h>

DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void);
DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void)
{
    static const dlg_plugin_info info = {DLG_ABI_MAJOR, DLG_ABI_MINOR, sizeof(dlg_plugin_info), "null_items", NULL};
    return &info;
}
