/* A plugin from a future dlgauge with ABI 2: only the three frozen fields
 * of dlg_plugin_info are in the old places.  What follows is garbage on
 * purpose, so a host that reads past abi_major/abi_minor would crash. */
#include <dlgauge/plugin.h>

typedef struct future_info {
    uint32_t abi_major, abi_minor, struct_size;
    uintptr_t poison[4];
} future_info;

DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void);
DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void)
{
    static const future_info info = {2, 3, sizeof(future_info), {1, 3, 5, 7}};
    return (const dlg_plugin_info *)(const void *)&info;
}
