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
