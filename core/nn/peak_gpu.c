/* % of peak on a GPU: the device's dense rate for the math the backend
 * runs (peak.h), from the table `dlgauge sysinfo` uses. */
#include "peak.h"

#include <stdio.h>
#include <string.h>

#include "../runtime/gpu_nvml.h"
#include "cuda/cuda_device.h"

void dlg_peak_from_gpu(dlg_peak *p, const char *gpu, int math)
{
    static const char *const names[] = {"FP32", "TF32 tensor-core", "BF16 tensor-core",
                                        "FP16 tensor-core"};
    *p = (dlg_peak){.isa = "gpu"};
    if (math < 0 || math > 3)
        math = 0;
    const dlg_gpu_peak *t = dlg_gpu_peak_find(gpu);
    if (!t) {
        snprintf(p->source, sizeof p->source, "GPU '%s' is not in dlgauge's peak table",
                 gpu ? gpu : "?");
        return;
    }
    double tf = math == 0 ? t->fp32 : math == 1 ? t->tf32 : t->fp16;
    const char *what = names[math];
    if (math == 1 && tf <= 0) { /* no TF32: the math runs at the FP32 rate */
        tf = t->fp32;
        what = "FP32 (no TF32 on this GPU)";
    }
    p->flops = tf * 1e12;
    snprintf(p->source, sizeof p->source,
             "%s: dense %s peak %.1f TFLOP/s (datasheet, boost clock, no sparsity)", gpu, what,
             tf);
}

void dlg_peak_for_backend(dlg_peak *p, const char *backend, int cores)
{
    int dev = 0, math = 0;
    if (!backend || dlg_cuda_parse_backend(backend, &dev, &math) < 0) {
        dlg_peak_detect_prec(p, cores, backend && strcmp(backend, "cpu-bf16") == 0);
        return;
    }
    char name[256] = "";
    if (dlg_cuda_device_name(dev, name, sizeof name) < 0)
        name[0] = '\0';
    dlg_peak_from_gpu(p, name[0] ? name : NULL, math);
}
