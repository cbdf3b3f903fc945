#!/usr/bin/env python3
"""Render gpu-check.sh's one table from the dlgauge and PyTorch result lines.

dlgauge lines (tests/cuda/cuda_check bench, prefixed with the precision):
    bench PREC MODEL MODE BACKEND BATCH IMG_S MS macs=N step_macs=N plan_s=.. loss=.. [graphs=off ...]
    energy PREC MODEL MODE BACKEND BATCH J_PER_IMG
torch lines (scripts/gpu-bench-torch.py):
    torch PREC MODEL MODE LAYOUT BATCH IMG_S MS J_PER_IMG
A bench line with graphs=off (steps run eagerly, not replayed as CUDA
graphs) gets a row of its own, marked so, beside the same PyTorch figure.
Rates are items/s and energies J/item; the unit column says what an item
is: img/s, or tok/s for lstm-ptb (its bench line says unit=tok; its MACs
are per token).  Other lines are ignored.  With --warmup and --iters, a first line says that
each figure is one timed window of --iters steps on each side (no median of
repeats: the budget of a GPU run goes to rows never measured instead).  % of peak = items/s x 2 x
MACs/item (x3 for training: forward + two backward GEMMs) / the GPU's peak
for the precision.
"""
import argparse
import sys

# what a model's rates count when its bench line does not say (unit=)
UNITS = {"lstm-ptb": "tok"}

# dense TFLOP/s (same figures as core/runtime/gpu_nvml.c)
PEAKS = [("H200", 67.0, 494.7, 989.4), ("H100 PCIe", 51.2, 378.0, 756.0),
         ("H100", 67.0, 494.7, 989.4), ("A100", 19.5, 156.0, 312.0),
         ("L40S", 91.6, 183.0, 362.0), ("L4", 30.3, 60.0, 121.0)]


def peak_for(gpu, prec):
    best = None
    for p in PEAKS:
        if p[0] in gpu and (best is None or len(p[0]) > len(best[0])):
            best = p
    if best is None:
        return None
    return {"fp32": best[1], "tf32": best[2]}.get(prec, best[3]) * 1e12


def parse(dl_path, torch_path):
    rows, macs, units = {}, {}, {}  # macs: (model, mode) -> a step's multiply-adds
    tag = ""  # an energy line belongs to the bench line before it
    for line in open(dl_path, errors="replace"):
        f = line.split()
        if f[:1] == ["bench"]:
            tag = "graphs=off" if "graphs=off" in f[7:] else ""
        if len(f) >= 8 and f[0] == "bench" and f[6] != "FAIL":
            key = (f[2], f[3], f[1], int(f[5]), tag)
            rows.setdefault(key, {})["dl"] = float(f[6])
            for kv in f[8:]:
                # a step's count as the engine planned it (training: no data
                # gradient into the images); older lines: 3x the forward
                if kv.startswith("step_macs="):
                    macs[(f[2], f[3])] = int(kv[10:])
                elif kv.startswith("macs=") and (f[2], f[3]) not in macs:
                    macs[(f[2], f[3])] = int(kv[5:]) * (3 if f[3] == "train" else 1)
                elif kv.startswith("unit="):
                    units[f[2]] = kv[5:]
        elif len(f) >= 7 and f[0] == "bench" and f[6] == "FAIL":
            rows.setdefault((f[2], f[3], f[1], int(f[5]), tag), {})["dl"] = "FAIL"
        elif len(f) == 7 and f[0] == "energy":
            rows.setdefault((f[2], f[3], f[1], int(f[5]), tag), {})["dl_e"] = float(f[6])
    for line in open(torch_path, errors="replace"):
        f = line.split()
        if len(f) == 9 and f[0] == "torch":
            key = (f[2], f[3], f[1], int(f[5]))
            for tag in [""] + [k[4] for k in rows if k[:4] == key and k[4]]:
                r = rows.setdefault(key + (tag,), {})
                r["pt"] = float(f[6])
                r["layout"] = f[4]
                r["pt_e"] = None if f[8] == "-" else float(f[8])
    return rows, macs, units


def fmt(v, spec):
    return "-" if v is None else (v if isinstance(v, str) else spec % v)


def fmt_j(v):
    """Energy per item: tokens cost microjoules, images tenths of a joule."""
    return fmt(v, "%.4f" if v is None or v == 0 or v >= 0.01 else "%.3e")


def render(rows, macs, units, gpu, out, window=None):
    if window:  # how much each figure rests on: one window, not a median
        out.write("each figure: one window of %d timed steps after %d warm-up steps, both sides"
                  " (no repeats)\n" % (window[1], window[0]))
    hdr = "%-10s %-5s %-4s %5s %12s %12s %6s %7s %10s %10s %s" % (
        "model", "mode", "prec", "batch", "dlgauge/s", "pytorch/s", "ratio", "%peak",
        "J/item dlg", "J/item pt", "unit")
    out.write(hdr + "\n" + "-" * len(hdr) + "\n")
    for key in sorted(rows):
        model, mode, prec, batch, tag = key
        r = rows[key]
        dl, pt = r.get("dl"), r.get("pt")
        ratio = dl / pt if isinstance(dl, float) and pt else None
        pk = peak_for(gpu, prec)
        pct = None
        if isinstance(dl, float) and pk and (model, mode) in macs:
            pct = 100.0 * dl * 2 * macs[(model, mode)] / pk
        unit = units.get(model, UNITS.get(model, "img")) + "/s"
        line = "%-10s %-5s %-4s %5d %12s %12s %6s %7s %10s %10s %s" % (
            model, mode, prec, batch, fmt(dl, "%.1f"), fmt(pt, "%.1f"), fmt(ratio, "%.2f"),
            fmt(pct, "%.1f"), fmt_j(r.get("dl_e")), fmt_j(r.get("pt_e")), unit)
        out.write(line + (" " + tag if tag else "") + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dlgauge", required=True)
    ap.add_argument("--torch", required=True)
    ap.add_argument("--gpu", default="")
    ap.add_argument("--warmup", type=int, help="warm-up steps before each timed window")
    ap.add_argument("--iters", type=int, help="timed steps: each figure is one such window")
    a = ap.parse_args()
    try:
        rows, macs, units = parse(a.dlgauge, a.torch)
    except OSError as e:
        sys.stderr.write("gpu_table: %s\n" % e)
        return 1
    window = (a.warmup, a.iters) if a.warmup is not None and a.iters is not None else None
    render(rows, macs, units, a.gpu, sys.stdout, window)
    return 0


if __name__ == "__main__":
    sys.exit(main())
