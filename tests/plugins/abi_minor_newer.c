/* Built against a newer minor of ABI 1 than this dlgauge knows: refused. */
#include <dlgauge/plugin.h>

static const dlg_plugin_desc *const items[] = {NULL};

DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void);
DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void)
{
    static const dlg_plugin_info info = {DLG_ABI_MAJOR, DLG_ABI_MINOR + 7, sizeof(dlg_plugin_info),
                                         "abi_minor_newer", items};
    return &info;
}
