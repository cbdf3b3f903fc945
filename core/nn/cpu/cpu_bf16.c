/* cpu-bf16: bf16 activations and weights on oneDNN's AVX-512 bf16
 * kernels (VDPBF16PS where the CPU has it), the way PyTorch runs a bf16
 * model, or trains one under autocast, on the CPU.  Layers that compute
 * (convolution, inner product, pooling, add) take bf16 inputs and
 * outputs; the rest follow their input's type, and a gradient has its
 * data's; accumulation, biases and the classifier's output stay fp32.
 * Parameters stay fp32 masters (a folded batch norm scales them exactly;
 * SGD updates them with fp32 gradients); each layer keeps a bf16 copy in
 * its kernel's layout, converted again only when the master moves. */
#include "cpu.h"

#include <stdlib.h>
#include <string.h>

int cpu_wcopy_init(cpu_wcopy *w, const dnnl_memory_desc_t *from, const dnnl_memory_desc_t *to)
{
    memset(w, 0, sizeof *w);
    w->from = *from;
    w->to = *to;
    size_t bytes = dnnl_memory_desc_get_size(to);
    if (posix_memalign(&w->buf, 64, bytes ? bytes : 64) != 0) {
        w->buf = NULL;
        return -DLG_ENOMEM;
    }
    return 0;
}

void *cpu_wcopy_get(cpu_ctx *c, cpu_wcopy *w, const dlg_tensor *t)
{
    /* seen starts at 0 and initialised params are at version >= 1 */
    if (w->seen != t->version) {
        if (cpu_reorder_once(c, &w->from, t->data, &w->to, w->buf, NULL) != 0)
            return NULL;
        w->seen = t->version;
    }
    return w->buf;
}

void cpu_wcopy_destroy(cpu_wcopy *w)
{
    free(w->buf);
    memset(w, 0, sizeof *w);
}
