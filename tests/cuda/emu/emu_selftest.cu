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

int dlg_emu_selftest_too_many_threads(void)
{
    k_nothing<<<1, 2048>>>();
    return (int)cudaGetLastError();
}

} // extern "C"
