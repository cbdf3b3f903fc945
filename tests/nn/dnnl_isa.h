/* What oneDNN runs on this CPU, for the tests of its bf16 kernels (built
 * only where oneDNN is). */
#ifndef DLG_TEST_NN_DNNL_ISA_H
#define DLG_TEST_NN_DNNL_ISA_H

#include <stdbool.h>

#include <oneapi/dnnl/dnnl.h>

/* Whether oneDNN takes its AVX-512 kernels here: cpu-bf16 refuses below. */
static inline bool has_avx512(void)
{
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    return (isa & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core;
}

/* Whether it takes its AMX (bf16 tile) kernels here. */
static inline bool has_amx(void)
{
    dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
    return (isa & dnnl_cpu_isa_avx512_core_amx) == dnnl_cpu_isa_avx512_core_amx;
}

#endif
