/* A plugin whose static constructor dies of SIGSEGV while dlopen runs it:
 * no going on from inside dlopen, but one line naming the file and exit
 * 2, not a bare "Segmentation fault" in every command. */
#include <dlgauge/plugin.h>

#include <stdint.h>
__attribute__((constructor)) static void crash_at_load(void)
{
    volatile uintptr_t bad = 16;
    *(volatile int *)bad = 1;
}

DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void);
DLG_EXPORT const dlg_plugin_info *dlgauge_plugin_entry(void) { return NULL; }
