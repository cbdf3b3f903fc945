/* Per-layer profiles of the nn workloads; see nn_profile.h. */
#include "nn_profile.h"

#include <stdio.h>
#include <string.h>

/* ms per timed step */
static double per_step_ms(uint64_t ns, uint64_t steps)
{
    return 1e-6 * (double)ns / (double)(steps > 0 ? steps : 1);
}

void nn_profile_report(dlg_net *net, uint64_t steps, const dlg_host *h,
                       const dlg_report_api *api, dlg_fields *f)
{
    enum { KINDS = 8, SLOWEST = 10 };
    double total = 0;
    for (int i = 0; i < dlg_net_layer_count(net); i++) {
        uint64_t fw = 0, bw = 0, calls;
        dlg_net_layer_time(net, i, &fw, &bw, &calls);
        total += per_step_ms(fw + bw, steps);
    }
    dlg_layer_kind k[KINDS];
    int nk = dlg_net_layer_kinds(net, k, KINDS);
    char text[1024] = "";
    for (int i = 0; i < nk && i < KINDS && total > 0; i++) {
        double fw = per_step_ms(k[i].fwd_ns, steps), bw = per_step_ms(k[i].bwd_ns, steps);
        size_t used = strlen(text);
        snprintf(text + used, sizeof text - used, "%s%s %s: %.1f%% (%.2f+%.2f ms)", i ? " | " : "",
                 k[i].type, k[i].impl, 100 * (fw + bw) / total, fw, bw);
    }
    api->add_double(f, "layers_ms", total);
    api->add_string(f, "layer_profile", text);
    int top[SLOWEST], ntop = dlg_net_layers_by_time(net, top, SLOWEST);
    for (int i = 0; i < ntop; i++) {
        dlg_layer_info li;
        uint64_t fw = 0, bw = 0, calls;
        dlg_net_layer_info(net, top[i], &li);
        dlg_net_layer_time(net, top[i], &fw, &bw, &calls);
        h->log(h, DLG_LOG_INFO, "profile: %-28s %-8s %8.2f ms/step  %s", li.name, li.type,
               per_step_ms(fw + bw, steps), dlg_net_layer_impl(net, top[i]));
    }
}
