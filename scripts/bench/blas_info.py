"""Which BLAS the PyTorch peers run (cnn_peer.py, mxnet_peer.py): the BLAS
libraries mapped into this process and OpenBLAS's own kernel name, so the
scripts can print the kernel that actually ran."""
import ctypes


def blas_info():
    """Which BLAS library is mapped, and OpenBLAS's own kernel name."""
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()[-1]
            if "blas" in p or "lapack" in p:
                libs.add(p)
    core = ""
    for p in sorted(libs):
        try:
            lib = ctypes.CDLL(p)
            fn = lib.openblas_get_corename
            fn.restype = ctypes.c_char_p
            cfg = lib.openblas_get_config
            cfg.restype = ctypes.c_char_p
            core = f"{fn().decode()} ({cfg().decode()})"
            break
        except (OSError, AttributeError):
            continue
    return {"blas_libs": sorted(libs), "openblas_core": core}
