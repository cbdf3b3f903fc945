/* Device/precision selection; no CUDA calls, so CI tests it anywhere. */
#include "cuda_device.h"

#include <dlgauge/plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_index(const char *s, int *out)
{
    if (!*s) {
        *out = 0;
        return 0;
    }
    if (*s != ':' || s[1] < '0' || s[1] > '9')
        return -DLG_EINVAL;
    char *end;
    long v = strtol(s + 1, &end, 10);
    if (*end || v < 0 || v >= DLG_CUDA_MAX_DEVICES)
        return -DLG_EINVAL;
    *out = (int)v;
    return 0;
}

int dlg_cuda_parse_backend(const char *name, int *device, int *tf32)
{
    if (!name)
        return -DLG_EINVAL;
    if (strncmp(name, "cuda-tf32", 9) == 0) {
        *tf32 = 1;
        return parse_index(name + 9, device);
    }
    if (strncmp(name, "cuda-bf16", 9) == 0) {
        *tf32 = 2;
        return parse_index(name + 9, device);
    }
    if (strncmp(name, "cuda-fp16", 9) == 0) {
        *tf32 = 3;
        return parse_index(name + 9, device);
    }
    if (strncmp(name, "cuda", 4) == 0) {
        *tf32 = 0;
        return parse_index(name + 4, device);
    }
    return -DLG_EINVAL;
}

/* device = auto with GPUs, or a bare "cuda": one GPU per rank of the node
 * (PyTorch's and Horovod's convention), said in the note. */
static int by_local_rank(const char *dev, int local_rank, int ndev, dlg_device_choice *out)
{
    int lr = local_rank > 0 ? local_rank : 0;
    int idx = lr % ndev;
    snprintf(out->note, sizeof out->note, "device = %s: rank %d on its node: cuda:%d (local rank mod %d GPU%s)",
             dev, lr, idx, ndev, ndev == 1 ? "" : "s");
    return idx;
}

int dlg_device_select(const char *device, const char *precision, int ndev, int local_rank,
                      const char *cpu_backend, dlg_device_choice *out, char *err, size_t errlen)
{
    const char *prec = precision && *precision ? precision : "fp32";
    const char *dev = device && *device ? device : "auto";
    int idx = 0, tf32 = 0;
    memset(out, 0, sizeof *out);
    if (strcmp(prec, "fp32") && strcmp(prec, "tf32") && strcmp(prec, "fp16") &&
        strcmp(prec, "bf16")) {
        snprintf(err, errlen, "precision '%s': expected fp32, tf32, fp16 or bf16", prec);
        return -DLG_EINVAL;
    }
    if (strcmp(dev, "auto") == 0) {
        out->cuda = ndev > 0;
        if (out->cuda)
            idx = by_local_rank(dev, local_rank, ndev, out);
        else
            snprintf(out->note, sizeof out->note,
                     "device = auto: no CUDA device found, running on the CPU (%s)", cpu_backend);
    } else if (strcmp(dev, "cuda") == 0 && ndev > 0) {
        out->cuda = true;
        idx = by_local_rank(dev, local_rank, ndev, out);
    } else if (strcmp(dev, "cpu") == 0) {
        out->cuda = false;
    } else if (strncmp(dev, "cuda", 4) == 0 && dlg_cuda_parse_backend(dev, &idx, &tf32) == 0 &&
               !tf32) {
        if (idx >= ndev) {
            if (ndev == 0)
                snprintf(err, errlen, "device = %s: no CUDA backend can run here: no CUDA device", dev);
            else
                snprintf(err, errlen, "device '%s': this machine has CUDA devices 0..%d", dev,
                         ndev - 1);
            return -DLG_ENOTSUP;
        }
        out->cuda = true;
    } else {
        snprintf(err, errlen, "device = '%s': expected auto, cpu, cuda or cuda:N", dev);
        return -DLG_EINVAL;
    }
    if (!out->cuda) {
        /* the oneDNN backend runs bf16 too (cpu-bf16); tf32 and fp16 are
         * GPU formats, and the reference backend is fp32 by design */
        bool bf16 = strcmp(prec, "bf16") == 0 && strcmp(cpu_backend, "cpu") == 0;
        if (strcmp(prec, "bf16") == 0 && !bf16) { /* a CPU backend that has no bf16 */
            snprintf(err, errlen,
                     "precision 'bf16': the %s backend runs fp32 only (backend = cpu runs bf16 on "
                     "AVX-512, and so does a CUDA device)",
                     cpu_backend);
            return -DLG_ENOTSUP;
        }
        if (strcmp(prec, "fp32") != 0 && !bf16) {
            snprintf(err, errlen, "precision '%s' needs a CUDA device; the %s backend runs fp32%s", prec,
                     cpu_backend, strcmp(cpu_backend, "cpu") == 0 ? " or bf16" : " only");
            return -DLG_ENOTSUP;
        }
        snprintf(out->backend, sizeof out->backend, "%s%s", cpu_backend, bf16 ? "-bf16" : "");
        return 0;
    }
    snprintf(out->backend, sizeof out->backend, "%s:%d",
             strcmp(prec, "tf32") == 0   ? "cuda-tf32"
             : strcmp(prec, "bf16") == 0 ? "cuda-bf16"
             : strcmp(prec, "fp16") == 0 ? "cuda-fp16"
                                         : "cuda",
             idx);
    return 0;
}
