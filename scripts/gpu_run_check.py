#!/usr/bin/env python3
"""Read back the CSV of scripts/gpu-check-run.ini's jobs (gpu-check.sh's
step 1c: `dlgauge run` on the lent GPU) and check what issue 5 asks of a
GPU row: the job ran on the GPU (device = auto took it), and the row has
the GPU's name, utilisation, memory, power, energy and energy per item from
the NVML sampler, and % of the GPU's own peak.  One line a job, then
"run: N jobs checked" or the failures; exit 1 on any failure.

usage: gpu_run_check.py RUN.CSV [--gpu NAME]
  --gpu NAME  the GPU nvidia-smi named: each row's gpu_name must be it
"""
import argparse
import csv
import sys

# job -> the backend its row must name (gpu-check-run.ini's jobs); None:
# a host job (no GPU), which must complete a pass of its work
JOBS = {
    "resnet50-auto": "cuda-bf16:0",
    "alexnet-jpeg": "cuda:0",
    "preprocess-rec": None,
    "inception-rec": "cuda-bf16:0",
    "lstm-medium": "cuda:0",
}
# fields every GPU row must have, above 0
POSITIVE = ("throughput", "gpu_util", "gpu_mem_peak_bytes", "power_avg_w", "energy_j",
            "energy_per_item_j")


def number(row, key):
    try:
        return float(row.get(key) or "nan")
    except ValueError:
        return float("nan")


def check_row(job, row, gpu):
    """The failures of one row, as phrases."""
    bad = []
    if row.get("status") != "ok":
        return [f"status {row.get('status')!r}: {row.get('error', '')}"]
    if JOBS[job] is None:
        return [] if number(row, "passes") >= 1 else [f"passes {row.get('passes')!r}: no whole pass"]
    if row.get("backend") != JOBS[job]:
        bad.append(f"ran on {row.get('backend')!r}, not {JOBS[job]}")
    if not row.get("gpu_name"):
        bad.append("no gpu_name (NVML)")
    elif gpu and gpu not in row["gpu_name"] and row["gpu_name"] not in gpu:
        bad.append(f"gpu_name {row['gpu_name']!r}, nvidia-smi says {gpu!r}")
    for key in POSITIVE:
        if not number(row, key) > 0:
            bad.append(f"{key} {row.get(key)!r}")
    if job != "lstm-medium" and not number(row, "pct_peak") > 0:  # the CNNs
        bad.append(f"pct_peak {row.get('pct_peak')!r} (peak_source {row.get('peak_source')!r})")
    if job == "alexnet-jpeg" and not number(row, "data_wait_fraction") >= 0:
        bad.append(f"data_wait_fraction {row.get('data_wait_fraction')!r}")
    return bad


def summary(job, row):
    """The row's figures in one line."""
    def f(key, fmt, scale=1.0):
        v = number(row, key)
        return "-" if v != v else fmt % (v * scale)
    if JOBS[job] is None:
        return (f"run {job}: {f('throughput', '%.1f')} {row.get('unit', '')}/s on the host, "
                f"{f('passes', '%.0f')} pass(es) of {f('images_per_pass', '%.0f')}")
    return (f"run {job}: {row.get('backend')} {f('throughput', '%.1f')} {row.get('unit', '')}/s, "
            f"gpu_util {f('gpu_util', '%.0f')}%, mem {f('gpu_mem_peak_bytes', '%.1f', 2**-30)} GiB, "
            f"{f('power_avg_w', '%.0f')} W, {f('energy_per_item_j', '%.3g')} J/item, "
            f"{f('pct_peak', '%.1f')}% of peak, data_wait {f('data_wait_fraction', '%.2f')}, "
            f"p50 {f('latency_p50_us', '%.0f', 1e-3)} ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--gpu", default="")
    a = ap.parse_args()
    try:
        with open(a.csv, newline="") as fh:
            rows = {r.get("job"): r for r in csv.DictReader(fh)}
    except OSError as e:
        print(f"run: FAILED: {e}")
        return 1
    failures = []
    for job in JOBS:
        row = rows.get(job)
        if row is None:
            failures.append(f"{job}: no row")
            continue
        print(summary(job, row))
        failures += [f"{job}: {b}" for b in check_row(job, row, a.gpu)]
    if failures:
        print("run: FAILED: " + "; ".join(failures))
        return 1
    print(f"run: {len(JOBS)} jobs checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
