/* A shared object with symbols, but not dlgauge's entry symbol. */
#include <dlgauge/plugin.h>

DLG_EXPORT int not_a_plugin_answer(void);
DLG_EXPORT int not_a_plugin_answer(void) { return 42; }
