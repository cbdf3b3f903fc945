"""Reads back the conv-kernel benchmarks' CSVs (conv_jobs.sh)."""
import csv
import glob
import sys


def med_ms(work, name):
    """Per-round median step times (ms) of job NAME, in round order."""
    rows = [next(csv.DictReader(open(f))) for f in sorted(glob.glob(f"{work}/{name}-*.csv"))]
    bad = [r for r in rows if r["status"] != "ok"]
    if bad:
        sys.exit(f"{name}: {bad[0].get('error', '')}")
    return [float(r["latency_p50_us"]) / 1e3 for r in rows]


# The layout of the engine's kernels (nChw8c activations, 8i8o weights):
# a plan hands a layer to them only where oneDNN chose these layouts for it
# (core/nn/cpu/cpu_conv_setup.c, wino_layouts), which it does on AVX2.
ENGINE_LAYOUT = "aBcd8b"


def impl(work, name):
    """(oneDNN implementation, layout) of job NAME's untimed verbose step
    (conv_impl in conv_jobs.sh)."""
    try:
        got = open(f"{work}/{name}.impl").read().split()
    except OSError:
        got = []
    return (got + ["-", "-"])[:2]


def engine_note(kernel, layouts, also=""):
    """The lines to print when oneDNN's direct kernels kept another layout
    than the engine's on some row: there a net runs oneDNN (ALSO: what
    else it may run instead), not KERNEL."""
    other = sorted({lay for lay in layouts if lay != ENGINE_LAYOUT})
    if not other:
        return []
    return [f"NOTE: on this machine oneDNN's direct kernels keep {', '.join(other)}, not nChw8c "
            f"({ENGINE_LAYOUT}), on the rows marked *: a dlgauge plan hands such a layer to {kernel} "
            f"only in nChw8c (cpu_conv_setup.c), so there it runs oneDNN's kernel{also} "
            f"and these rows time {kernel} against a kernel it never replaces here; "
            "docs/benchmarks.md's tables of this script are from an AVX2 machine"]
