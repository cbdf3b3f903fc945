// Kernels with planted faults, so test_cuda_kernels_emu can check that the
// emulator notices them (a harness that cannot fail proves nothing); the
// races are for its ThreadSanitizer build (--planted-races).
#include <cuda_runtime.h>

namespace {

// each thread publishes base + its index, then reads its right neighbour's
__global__ void k_rotate(float *out, int n, float base, int synced)
{
    __shared__ float v[1024];
    v[threadIdx.x] = base + (float)threadIdx.x;
    if (synced)
        __syncthreads();
    out[threadIdx.x] = v[(threadIdx.x + 1) % n];
}

// half of each warp waits at a ballot, the other half at a block barrier
__global__ void k_mixed_barriers(int *out)
{
    if (threadIdx.x % 32 < 16)
        out[threadIdx.x] = (int)__ballot_sync(0xffffffffu, 1);
    else
        __syncthreads();
}

__global__ void k_nothing() {}

// k_mixed_barriers' deadlock under a 24 KiB array: the frames its threads
// leave on their fiber stacks hold poisoned redzones (under ASan) far
// below the stacks' tops
__global__ void k_deep_deadlock(int *out)
{
    volatile int deep[6144];
    deep[threadIdx.x] = (int)threadIdx.x;
    if (threadIdx.x % 32 < 16)
        deep[threadIdx.x] += (int)__ballot_sync(0xffffffffu, 1);
    else
        __syncthreads();
    out[threadIdx.x] = deep[threadIdx.x];
}

// each thread fills a 32 KiB array on those stacks and sums it back: clean
// memory, unless the emulator left the deadlock's redzones behind
__global__ void k_deep_stack(int *out)
{
    volatile int deep[8192];
    for (int i = 0; i < 8192; i++)
        deep[i] = i;
    __syncthreads();
    int s = 0;
    for (int i = 0; i < 8192; i++)
        s += deep[i];
    out[threadIdx.x] = s;
}

// reads shared memory no thread wrote: the emulator's poison (NaN)
__global__ void k_uninit(float *out)
{
    __shared__ float v[64];
    out[blockIdx.x * 64 + threadIdx.x] = v[threadIdx.x];
}

// every thread of every block adds one, atomically: exact, and no race
__global__ void k_atomic(float *out) { atomicAdd(out, 1.0f); }

// thread 0 of each block adds one without an atomic: blocks race
__global__ void k_blocks_write(float *out)
{
    if (threadIdx.x == 0)
        out[0] += 1.0f;
}

// every thread of one block writes the same word in one phase
__global__ void k_phase_write(float *out) { out[1] = (float)threadIdx.x; }

} // namespace

extern "C" {

int dlg_emu_selftest_synced(float *out, int n)
{
    k_rotate<<<1, n>>>(out, n, 0.0f, 1);
    return (int)cudaGetLastError();
}

int dlg_emu_selftest_race(float *out, int n)
{
    k_rotate<<<1, n>>>(out, n, 1000.0f, 0);
    return (int)cudaGetLastError();
}

int dlg_emu_selftest_divergent(void)
{
    int out[64];
    k_mixed_barriers<<<1, 64>>>(out);
    return (int)cudaGetLastError();
}

int dlg_emu_selftest_uninit(float *out)
{
    k_uninit<<<2, 64>>>(out);
    return (int)cudaGetLastError();
}

int dlg_emu_selftest_atomic(float *out)
{
    k_atomic<<<3, 64>>>(out);
    return (int)cudaGetLastError();
}

// two races in global memory, for the ThreadSanitizer build to report
int dlg_emu_selftest_global_races(float *out)
{
    k_blocks_write<<<2, 32>>>(out);
    k_phase_write<<<1, 64>>>(out);
    return (int)cudaGetLastError();
}

// the deadlock's launch error; then the deep kernel's, its sums in out
int dlg_emu_selftest_deep_deadlock(int *out, int *after)
{
    k_deep_deadlock<<<1, 64>>>(out);
    int rc = (int)cudaGetLastError();
    k_deep_stack<<<1, 64>>>(out);
    *after = (int)cudaGetLastError();
    return rc;
}

int dlg_emu_selftest_too_many_threads(void)
{
    k_nothing<<<1, 2048>>>();
    return (int)cudaGetLastError();
}

} // extern "C"
