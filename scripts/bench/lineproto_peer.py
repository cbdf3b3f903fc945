"""The peer of lineproto_rate.c: InfluxDB's Python client (Debian
python3-influxdb) formatting the same point.  Usage: lineproto_peer.py N"""
import sys
import time

from influxdb.line_protocol import make_lines

n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
names = ["throughput", "throughput_ci95", "throughput_stddev", "wall_s", "latency_min_us", "latency_p50_us",
         "latency_p90_us", "latency_p99_us", "latency_p999_us", "latency_max_us", "latency_mean_us",
         "latency_stddev_us", "data_wait_fraction", "cpu_user_s", "cpu_sys_s", "loss", "top1", "gflops",
         "pct_peak", "energy_j"]
fields = {k: 1234.5678 * (i + 1) for i, k in enumerate(names)}
for i, k in enumerate(["items", "steps", "repeats", "warmup_steps", "rss_peak_bytes", "read_bytes",
                       "storage_read_bytes", "storage_ios"]):
    fields[k] = 123456789 + i
fields["unit"] = "images"
fields["version"] = "0.1.0"
point = {"measurement": "dlgauge_result",
         "tags": {"batch": "64", "host": "gpu-node-17", "job": "resnet50 train",
                  "run_id": "20261129T221808Z-316a", "status": "ok", "workload": "resnet50"},
         "fields": fields, "time": 1795990688792117342}
data = {"points": [point] * 1000}
make_lines(data)  # warm-up, untimed, as lineproto_rate.c's
t0 = time.perf_counter()
total = 0
for _ in range(n // 1000):
    total += len(make_lines(data))
dt = time.perf_counter() - t0
print(f"{(n // 1000) * 1000 / dt:.0f} {total / dt / 1e6:.1f}")
