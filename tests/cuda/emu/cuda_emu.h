/* cuda_emu.h — runs the backend's own CUDA kernels on the CPU, for tests.
 *
 * CI has the CUDA toolkit but no GPU, so the kernels in core/nn/cuda's .cu
 * files would otherwise meet their first input on a lent GPU.  This header is
 * force-included (g++ -include) into those files after
 * rewrite_launches.py has turned each `k<<<grid, block, shm, s>>>(args)`
 * into a dlg_emu_launch call.  In a kernel that may reach a barrier every
 * CUDA thread becomes a fiber (cuda_emu.cc); in one that cannot, a plain
 * call.  Blocks run one after another, the threads of a block in a shuffled
 * order between barriers, so a missing __syncthreads shows up as a wrong
 * result, a divergent one as a reported deadlock, and (under ASan) an
 * out-of-bounds index as an ASan report.  Launch limits are checked as the
 * hardware would (threads per block, grid y/z <= 65535).  A checked launch
 * goes to dlg_emu_submit: run at once here, queued on its stream under
 * tests/cuda/fakegpu (run when its turn comes).
 *
 * Each block gets its own shared arrays (rewrite_launches.py turns every
 * __shared__ declaration into a dlg_emu_shared call), filled with 0xff
 * bytes at the block's start, so a read before any write gives NaN or -1.
 *
 * Races: fibers never preempt each other, so two threads touching one
 * word within a barrier phase run in some order and give some answer.
 * Built with DLG_EMU_TSAN (and the kernels with -fsanitize=thread), every
 * CUDA thread is a ThreadSanitizer fiber that synchronises with others only
 * at the barriers it passes, so such an access pair is reported as a data
 * race, in shared or global memory, as compute-sanitizer's racecheck would.
 * Not in this build: timing, memory coalescing.
 */
#ifndef DLG_CUDA_EMU_H
#define DLG_CUDA_EMU_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <functional>
#include <tuple>
#include <type_traits>
#include <utility>

/* the CUDA headers give these a meaning only nvcc understands */
#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __forceinline__
#undef __launch_bounds__
#undef __restrict__
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
/* rewrite_launches.py replaces every __shared__ declaration; one it missed
 * fails to compile */
#define __shared__ __shared___declaration_not_rewritten

namespace dlg_emu {

struct config {
    dim3 grid, block;
    size_t shared;
    cudaStream_t stream;
    bool may_sync; /* the kernel may reach a barrier: threads need fibers */
};

/* the running thread's coordinates; valid inside a kernel only.  A plain
 * global, not thread_local: kernels run on one host thread, and a
 * thread_local read from a shared object costs a __tls_get_addr call on
 * every threadIdx. */
struct coords {
    uint3 thread, block;
    dim3 block_dim, grid_dim;
};
extern const coords *g_now;

/* Checks the launch as the hardware would, then hands the grid to
 * dlg_emu_submit, which runs body once per CUDA thread (now, in the kernel
 * tests; in stream order, or into a graph being captured, under
 * tests/cuda/fakegpu).  Returns the launch error, which is also what
 * dlg_emu_get_last_error returns next. */
int launch(const config &cfg, std::function<void()> body, const char *where);

void syncthreads();
int syncthreads_or(int pred);
unsigned ballot(unsigned mask, int pred);
/* The running block's copy of the shared array declared at tag (bytes
 * long): allocated and poisoned at the first call of each block. */
void *shared_memory(const void *tag, size_t bytes);

} // namespace dlg_emu

template <class T> inline T *dlg_emu_shared(const void *tag)
{
    return (T *)dlg_emu::shared_memory(tag, sizeof(T));
}

#define threadIdx (dlg_emu::g_now->thread)
#define blockIdx (dlg_emu::g_now->block)
#define blockDim (dlg_emu::g_now->block_dim)
#define gridDim (dlg_emu::g_now->grid_dim)
#define warpSize 32

inline void __syncthreads() { dlg_emu::syncthreads(); }
inline int __syncthreads_or(int p) { return dlg_emu::syncthreads_or(p); }
inline unsigned __ballot_sync(unsigned mask, int p) { return dlg_emu::ballot(mask, p); }
/* CUDA's device min/max overloads, for any mix of arithmetic types */
template <class A, class B> inline typename std::common_type<A, B>::type min(A a, B b)
{
    return b < a ? b : a;
}
template <class A, class B> inline typename std::common_type<A, B>::type max(A a, B b)
{
    return a < b ? b : a;
}
inline int __popc(unsigned v) { return __builtin_popcount(v); }
template <class T> inline T atomicExch(T *p, T v)
{
    T old;
    __atomic_exchange(p, &v, &old, __ATOMIC_RELAXED);
    return old;
}
/* a real atomic read-modify-write, so ThreadSanitizer sees one (fibers
 * alone never interleave inside it) */
template <class T> inline T atomicAdd(T *p, T v)
{
    T old, sum;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    do
        sum = old + v;
    while (!__atomic_compare_exchange(p, &old, &sum, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    return old;
}

/* Where a checked launch goes: run at once (the default, in cuda_emu.cc),
 * or queued on its stream (tests/cuda/fakegpu). */
void dlg_emu_submit(cudaStream_t s, std::function<void()> grid);

inline dlg_emu::config dlg_emu_cfg(dim3 g, dim3 b, size_t shm = 0, cudaStream_t s = 0)
{
    return dlg_emu::config{g, b, shm, s, true};
}

/* the arguments are copied, as a launch copies them; may_sync comes from
 * rewrite_launches.py's scan of the kernel */
template <class F, class... A>
void dlg_emu_launch_at(const char *where, dlg_emu::config cfg, bool may_sync, F body, A... args)
{
    std::tuple<A...> a(args...);
    cfg.may_sync = may_sync;
    dlg_emu::launch(cfg, [body, a]() { std::apply(body, a); }, where);
}
#define DLG_EMU_STR2(x) #x
#define DLG_EMU_STR(x) DLG_EMU_STR2(x)
#define dlg_emu_launch(...) dlg_emu_launch_at(__FILE__ ":" DLG_EMU_STR(__LINE__), __VA_ARGS__)

/* the runtime calls the kernel files make */
cudaError_t dlg_emu_get_last_error();
#define cudaGetLastError dlg_emu_get_last_error
inline cudaError_t dlg_emu_memset_async(void *p, int v, size_t n, cudaStream_t s = 0)
{
    dlg_emu_submit(s, [p, v, n]() { memset(p, v, n); }); /* in stream order, as a launch */
    return cudaSuccess;
}
#define cudaMemsetAsync dlg_emu_memset_async

#endif
