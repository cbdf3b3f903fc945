/* Per-layer profiles of the nn workloads (option `profile`, engine
 * dlg_plan_opts.profile): shared by the CNNs (cnn.c) and lstm-ptb. */
#ifndef DLG_NN_PROFILE_H
#define DLG_NN_PROFILE_H

#include <dlgauge/nn.h>
#include <dlgauge/plugin.h>

#include <stdint.h>

/* The profile's result fields, as a workload's field table lists them. */
#define NN_PROFILE_FIELDS                                                                          \
    {"layers_ms", DLG_FIELD_DOUBLE, "ms",                                                          \
     "profile = true: the layers' time per step (forward + backward), over the timed steps "      \
     "(after the warm-up)"},                                                                       \
        {"layer_profile", DLG_FIELD_STRING, "",                                                    \
         "profile = true: the 8 heaviest layer kinds, 'type kernel: share% (forward+backward ms " \
         "per step)', separated by ' | '"}


/* layers_ms and layer_profile over timed_steps steps (those since the
 * last dlg_net_layer_time_reset), and the 10 slowest layers in the log. */
void nn_profile_report(dlg_net *net, uint64_t timed_steps, const dlg_host *h,
                       const dlg_report_api *api, dlg_fields *f);

#endif
