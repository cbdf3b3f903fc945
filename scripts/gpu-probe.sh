#!/usr/bin/env bash
# gpu-probe.sh: record a CUDA machine's software environment and a PyTorch
# baseline (scripts/gpu-probe-torch.py) for a future dlgauge CUDA backend.
# Writes everything to $OUT/probe.txt (or ./gpu-probe.txt when OUT is unset)
# and to stdout.  Never fails hard: each section runs on regardless.
top=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-.}
mkdir -p "$out" 2>/dev/null || out=.
log="$out/probe.txt"
[ -n "${OUT:-}" ] || log="$out/gpu-probe.txt"

sec() { echo; echo "==== $* ===="; }

py_pkg_dirs() {
    python3 - <<'EOF'
import importlib, os
for mod in ("nvidia.cudnn", "nvidia.cublas", "nvidia.nccl", "nvidia.cuda_runtime"):
    try:
        m = importlib.import_module(mod)
    except Exception as e:
        print(f"{mod}: not importable ({type(e).__name__})")
        continue
    d = os.path.dirname(m.__file__) if getattr(m, "__file__", None) else list(m.__path__)[0]
    print(f"{mod}: {d}")
    for sub in ("include", "lib"):
        p = os.path.join(d, sub)
        if os.path.isdir(p):
            print(f"  {sub}/: " + " ".join(sorted(os.listdir(p))))
        else:
            print(f"  {sub}/: (absent)")
EOF
}

main() {
    sec "date / host"
    date -u || true; uname -a || true
    sec "nvidia-smi"
    timeout 30 nvidia-smi || true
    sec "nvidia-smi --query-gpu"
    timeout 30 nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,power.limit,driver_version --format=csv || true
    sec "nvcc --version"
    nvcc --version || true
    sec "which nvcc cmake gcc python3"
    which nvcc cmake gcc python3 || true
    sec "cmake --version"
    cmake --version || true
    sec "gcc --version"
    gcc --version || true
    sec "torch / torchvision / cuda / cudnn"
    timeout 60 python3 -c 'import torch, torchvision; print(torch.__version__, torchvision.__version__, torch.version.cuda, torch.backends.cudnn.version())' || true
    sec "cuDNN / cuBLAS / NCCL inside the Python packages"
    timeout 60 python3 -c 'import nvidia.cudnn, os; print(os.path.dirname(nvidia.cudnn.__file__))' || true
    py_pkg_dirs || true
    sec "find headers and libs under the nvidia Python namespace"
    nv=$(timeout 60 python3 -c 'import nvidia; print(list(nvidia.__path__)[0])' 2>/dev/null) || true
    if [ -n "$nv" ]; then
        echo "nvidia namespace: $nv"; ls "$nv" || true
        find "$nv" -maxdepth 4 \( -name 'cudnn*.h' -o -name 'libcudnn*.so*' -o -name 'cublas*.h' \
             -o -name 'libcublas*.so*' -o -name 'nccl*.h' -o -name 'libnccl*.so*' -o -name 'cuda_runtime.h' \
             -o -name 'libcudart*.so*' \) 2>/dev/null | sort || true
    fi
    sec "ls -d /usr/local/cuda*; ls /usr/local/cuda*/lib64 | head"
    ls -ld /usr/local/cuda* || true
    ls /usr/local/cuda*/lib64 2>&1 | head -n 40 || true
    ls /usr/local/cuda*/include/cudnn*.h /usr/include/cudnn*.h /usr/include/*/cudnn*.h 2>/dev/null || echo "no cudnn*.h in /usr/local/cuda*/include or /usr/include"
    sec "cuDNN / cuBLAS header versions"
    for h in /usr/local/cuda/include/cudnn_version.h ${nv:+$(find "$nv" -maxdepth 4 -name cudnn_version.h 2>/dev/null)}; do
        [ -f "$h" ] && { echo "$h:"; grep -E '^#define CUDNN_(MAJOR|MINOR|PATCHLEVEL) ' "$h"; }
    done || true
    for h in /usr/local/cuda/include/cublas_api.h ${nv:+$(find "$nv" -maxdepth 4 -name cublas_api.h 2>/dev/null)}; do
        [ -f "$h" ] && { echo "$h:"; grep -E '^#define CUBLAS_VER_(MAJOR|MINOR|PATCH) ' "$h"; }
    done || true
    sec "ldconfig -p | grep cudnn|cublas|nvidia-ml|nccl"
    ldconfig -p | grep -E 'cudnn|cublas|nvidia-ml|nccl' || echo "(none in ldconfig cache)"
    sec "pip list | grep torch|nvidia|numpy"
    timeout 60 python3 -m pip list 2>/dev/null | grep -iE 'torch|nvidia|numpy' || true
    sec "nproc / free -g"
    nproc || true; free -g || true
    sec "PyTorch baseline (synthetic data)"
    PYTHONUNBUFFERED=1 timeout 200 python3 "$top/scripts/gpu-probe-torch.py" || echo "gpu-probe-torch.py exited rc=$?"
    sec "nvidia-smi after"
    timeout 30 nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv || true
    sec "done"
}

main 2>&1 | tee "$log"
exit 0
