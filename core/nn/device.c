/* A job's `device` and `precision` -> the engine backend that runs it:
 * the devices present (through cuda-probe.so), the choice
 * (dlg_device_select) and, for a CUDA choice, the backend itself
 * (cuda.so), so every way it can fail is one error line at setup. */
#include "backend.h"
#include "cuda/cuda_device.h"

#include <stdio.h>
#include <string.h>

int dlg_device_backend(const char *device, const char *precision, int local_rank, const char *cpu_backend,
                       const char **backend, char *note, size_t notelen, char *err,
                       size_t errlen)
{
    const char *dev = device && *device ? device : "auto";
    char why[200] = "", msg[256] = "";
    int ndev = 0;
    dlg_device_choice c;
    note[0] = '\0';
    if (strcmp(dev, "cpu") != 0)
        dlg_cuda_device_count(&ndev, why, sizeof why);
    int rc = dlg_device_select(dev, precision, ndev, local_rank, cpu_backend, &c, msg, sizeof msg);
    if (rc < 0) {
        if (ndev == 0 && strncmp(dev, "cuda", 4) == 0)
            snprintf(err, errlen, "%s (%s)", msg, why);
        else
            snprintf(err, errlen, "%s", msg);
        return rc;
    }
    snprintf(note, notelen, "%s", c.note);
    if (!c.cuda && strcmp(c.backend, cpu_backend) == 0) {
        *backend = cpu_backend;
        return 0;
    }
    char lerr[640] = ""; /* cuda*, or cpu-bf16 */
    const dlg_backend *bk = dlg_backend_lookup(c.backend, lerr, sizeof lerr);
    if (!bk) {
        snprintf(err, errlen, "device = %s: %s", dev, lerr);
        return -DLG_ENOTSUP;
    }
    *backend = bk->name; /* static: a net may keep the pointer */
    return 0;
}
