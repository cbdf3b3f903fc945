/* Device and precision selection: which backend a job's `device` and
 * `precision` ask for.  cuda_select.c is pure C (built and tested even
 * without CUDA); the device queries go through cuda-probe.so
 * (cuda_loader.c, cuda_module.h). */
#ifndef DLG_NN_CUDA_DEVICE_H
#define DLG_NN_CUDA_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

#define DLG_CUDA_MAX_DEVICES 8

/* "cuda", "cuda:N", "cuda-tf32", "cuda-tf32:N", "cuda-bf16", "cuda-bf16:N",
 * "cuda-fp16", "cuda-fp16:N" -> device, math (*tf32: 0 fp32, 1 tf32,
 * 2 bf16, 3 fp16: dlg_cuda_math's values);
 * -DLG_EINVAL for anything else (N in 0..DLG_CUDA_MAX_DEVICES-1). */
int dlg_cuda_parse_backend(const char *name, int *device, int *tf32);

typedef struct dlg_device_choice {
    char backend[32]; /* for dlg_plan_opts.backend */
    bool cuda;
    char note[160];   /* one line when auto fell back to the CPU or the local
                       * rank chose the GPU, else "" */
} dlg_device_choice;

/* device: auto | cpu | cuda | cuda:N; precision: fp32 | tf32 | fp16 | bf16
 * (NULL = fp32); ndev: CUDA devices present (from dlg_cuda_device_count);
 * local_rank: this process's place among the ranks on its node (0 alone;
 * dlg_rank_info.local_rank); cpu_backend: the CPU backend's name ("cpu" or
 * "ref").  auto and a bare cuda pick cuda:(local_rank mod ndev) when
 * ndev > 0, one GPU per rank, with a note that says so; auto with no GPU
 * the CPU with a note; cuda:N is N whatever the rank.  Errors (negative
 * DLG_E*, message in err): unknown device or precision, cuda or cuda:N
 * with no such device, a precision the chosen backend does not run. */
int dlg_device_select(const char *device, const char *precision, int ndev, int local_rank,
                      const char *cpu_backend, dlg_device_choice *out, char *err, size_t errlen);

/* device, precision and local_rank as above, the devices counted here:
 * the backend name to plan with (cpu_backend, or the CUDA backend's
 * static name) and a note for the log when auto fell back to the CPU or
 * the local rank chose the GPU ("" otherwise), or a negative DLG_E* with
 * one error line in err (core/nn/device.c). */
int dlg_device_backend(const char *device, const char *precision, int local_rank, const char *cpu_backend,
                       const char **backend, char *note, size_t notelen, char *err,
                       size_t errlen);

/* Number of CUDA devices; 0 with a reason in why when there is no driver,
 * no device, no CUDA module or no CUDA in this build (never an error for
 * that).  Negative only on a bad call. */
int dlg_cuda_device_count(int *n, char *why, size_t whylen);

/* The device's name (cudaGetDeviceProperties); -DLG_ENOTSUP if none. */
int dlg_cuda_device_name(int device, char *name, size_t len);

#endif
