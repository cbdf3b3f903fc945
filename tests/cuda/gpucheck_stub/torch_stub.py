"""Runs scripts/gpu-bench-torch.py (argv[1]) with stub torch modules whose
cases print a made-up line (see python beside this file); at the
STUB_TORCH_TRICKLE'th case it prints a line every 0.3 s and never ends."""
import importlib.util
import os
import sys
import time
import types

torch = types.ModuleType("torch")
torch.__version__ = "stub"
torch.version = types.SimpleNamespace(cuda="13.0")
torch.backends = types.SimpleNamespace(cudnn=types.SimpleNamespace(version=lambda: 91900),
                                       cuda=types.SimpleNamespace(matmul=types.SimpleNamespace()))
torch.nn = types.ModuleType("torch.nn")
torch.nn.Module = object
tv = types.ModuleType("torchvision")
tv.__version__ = "stub"
sys.modules.update({"torch": torch, "torch.nn": torch.nn, "torchvision": tv})
for name in ("bvlc_alexnet", "bvlc_googlenet"):
    m = types.ModuleType(name)
    setattr(m, name, None)
    sys.modules[name] = m
sys.path.insert(0, os.path.dirname(sys.argv[1]))
spec = importlib.util.spec_from_file_location("gpu_bench_torch", sys.argv[1])
gbt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gbt)
seen = [0]


def trickle():
    """A PyTorch that keeps printing but never finishes its case."""
    try:
        while True:
            print("# still warming up", flush=True)
            time.sleep(0.3)
    except BrokenPipeError:  # gpu-check.sh is gone
        os._exit(1)


def case(name, mode, prec, batch, *rest):
    seen[0] += 1
    if seen[0] == int(os.environ.get("STUB_TORCH_DIE", "0")):
        os._exit(1)
    if seen[0] == int(os.environ.get("STUB_TORCH_TRICKLE", "0")):
        trickle()
    time.sleep(float(os.environ.get("STUB_TORCH_S", "0")))
    print("torch %s %s %s NCHW %d 90.0 1.000 -" % (prec, name, mode, batch), flush=True)


gbt.run_case = case
gbt.run_lm = lambda mode, prec, batch, *rest: case("lstm-ptb", mode, prec, batch)
sys.argv = sys.argv[1:]
gbt.main()
