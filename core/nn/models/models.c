#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>
int dlg_model_build(dlg_net *net, const char *model, int n, int classes) { return -DLG_ENOTSUP; }
