#!/usr/bin/env bash
# `dlgauge run` end to end on the CPU stand-in GPU (tests/cuda/fakegpu):
# the caffe workloads' and lstm-ptb's CUDA paths (device = cuda:0: the
# backend module, pinned input buffers, event step times, % of the GPU's
# peak) with results read back from the CSV sink, and the GPU metrics the
# runner samples through NVML (a fake libnvidia-ml: 250 W at 80%).  The
# fp32 jobs run again on the CPU backend: the same losses, step for step
# (training from one seed on the same data, CUDA graphs replaying from the
# third step), within 1e-5.
# Usage: fakegpu_run.sh DLGAUGE PLUGIN_DIR FAKE_MODULE_DIR FAKE_NVML WORK_DIR
set -eu
DLG=$1 PLUG=$2 FAKE=$3 NVML=$4 WORK=$5
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
# ctest's tuning record (the build's), else the script's own, never ~/.cache's
export DLGAUGE_TUNE="${DLGAUGE_TUNE:-$WORK/tune.txt}"
ln -s "$NVML" libnvidia-ml.so.1
"$DLG" mkdata text --out corpus.txt --words 20000 >/dev/null
cat > fake.ini <<'INI'
[global]
sinks = csv

[sink csv]
path = r.csv

; crop 67 (AlexNet's smallest): the same layers and paths as at 227 in a
; quarter of the time (the emulated kernels' cost goes with the pixels);
; profiled, as lm is: layer times from events on the GPU's timeline
[job cnn]
workload = alexnet
device = cuda:0
precision = bf16
batch = 1
crop = 67
iterations = 2
profile = true

[job lm]
workload = lstm-ptb
device = cuda:0
data = text:corpus.txt
hidden = 32
bptt = 8
batch = 4
vocab = 500
iterations = 4
profile = true

; fp16: cuDNN's LSTM on half data, fp32 master weights, loss scaling
[job lm16]
workload = lstm-ptb
device = cuda:0
precision = fp16
data = text:corpus.txt
hidden = 32
layers = 2
bptt = 8
batch = 4
vocab = 500
lr = 5
warmup = 0
iterations = 6

; fp32, with a CPU twin each (below): no batch norm, so a few SGD steps
; stay comparable (ResNet-50 at batch 2 drifts by 1% in three)
[job cnn32]
workload = alexnet
device = cuda:0
batch = 2
crop = 131
classes = 10
lr = 0.01
warmup = 0
iterations = 3

[job lm3]
workload = lstm-ptb
device = cuda:0
data = text:corpus.txt
hidden = 32
layers = 3
tied = true
momentum = 0.9
lr = 1
clip = 0
bptt = 8
batch = 4
vocab = 500
warmup = 0
iterations = 4
INI
# the twins: the same jobs on the CPU backend
sed -n '/^\[job cnn32\]/,$p' fake.ini | sed 's/^device = cuda:0/device = cpu/' |
  sed 's/^\[job \(.*\)\]/[job \1_cpu]/' >>fake.ini
LD_LIBRARY_PATH="$WORK" DLGAUGE_PLUGIN_PATH=$PLUG DLGAUGE_NN_MODULE_DIR=$FAKE FAKEGPU_LEAKS=fail \
  "$DLG" run fake.ini
python3 - <<'PY'
import csv, math, sys
rows = {r["job"]: r for r in csv.DictReader(open("r.csv"))}
def need(ok, what):
    if not ok:
        sys.exit("fakegpu_run: " + what + ": " + repr(rows))
need(set(rows) == {"cnn", "lm", "lm16", "cnn32", "lm3", "cnn32_cpu", "lm3_cpu"},
     "one row per job")
for job, backend in (("cnn", "cuda-bf16:0"), ("lm", "cuda:0"), ("lm16", "cuda-fp16:0"),
                     ("cnn32", "cuda:0"), ("lm3", "cuda:0")):
    r = rows[job]
    need(r["status"] == "ok", job + " status")
    need(r["backend"] == backend, job + " ran on " + r["backend"])
    need("fakegpu" in r["peak_source"], job + " % of peak from the GPU's table")
    need(float(r["throughput"]) > 0 and float(r["latency_p50_us"]) > 0, job + " timings")
    need(r["gpu_name"] == "NVIDIA H200 (fake)" and abs(float(r["gpu_util"]) - 80) < 1,
         job + " NVML samples")
    need(float(r["energy_per_item_j"]) > 0, job + " energy per item")
# the profiles: every layer kind timed on the device, within the step,
# cuDNN's algorithms named; the unprofiled jobs report none
for job, kinds in (("cnn", ("conv cudnn f:", " nhwc", "fc ", "lrn ", "pool ")),
                   ("lm", ("lstm ", "embed", "fc "))):
    r = rows[job]
    prof, ms = r.get("layer_profile", ""), float(r.get("layers_ms") or 0)
    need(all(k in prof for k in kinds), job + " layer_profile " + prof)
    # layers_ms is a mean over the timed steps: at most their mean time (a
    # median is below the mean where one step ran long: under load, 2584 ms
    # of layers in steps of 2198 and 4193 ms)
    need(0 < ms <= float(r["latency_mean_us"]) / 1e3 * 1.01, job + " layers_ms within a step")
need(rows["cnn32"].get("layer_profile", "") == "", "cnn32 has no profile")
# AlexNet memorises one synthetic image; the LM must beat a uniform guess
need(math.isfinite(float(rows["cnn"]["loss"])) and float(rows["cnn"]["loss"]) < math.log(1000),
     "cnn loss")
need(float(rows["lm"]["last_loss"]) < math.log(int(rows["lm"]["vocab_size"])), "lm loss")
# fp16 trains: the last segment's loss below the run's mean and a uniform guess
lm16 = rows["lm16"]
need(math.isfinite(float(lm16["loss"])) and
     float(lm16["last_loss"]) < min(float(lm16["loss"]), math.log(int(lm16["vocab_size"]))),
     "lm16 loss falls")
# and reports its loss scaling: 2**16 halved once per skipped step (6 steps
# never reach the 2000 clean ones of a doubling); fp32 rows scale nothing
scale, skipped = lm16.get("loss_scale", ""), lm16.get("skipped_steps", "")
need(scale != "" and skipped != "" and 0 <= int(skipped) < 6 and
     float(scale) == 65536.0 / 2 ** int(skipped), "lm16 loss_scale, skipped_steps")
for job in ("lm", "lm3", "lm3_cpu"):
    need(rows[job].get("loss_scale", "") == "" and rows[job].get("skipped_steps", "") == "",
         job + " has no loss scaling fields")
for job, fields in (("cnn32", ("loss",)), ("lm3", ("loss", "last_loss"))):
    gpu, cpu = rows[job], rows[job + "_cpu"]
    need(cpu["status"] == "ok" and cpu["backend"] == "cpu", job + "_cpu status")
    for f in fields:
        g, c = float(gpu[f]), float(cpu[f])
        need(abs(g - c) <= 1e-5 * abs(c), f"{job} {f}: cuda {g!r} vs cpu {c!r}")
print("fakegpu_run: ok")
PY
# precisions lstm-ptb cannot run there: one line each, a non-zero exit
refused() { # PRECISION DEVICE WANT
  printf '[job x]\nworkload = lstm-ptb\ndevice = %s\nprecision = %s\ndata = text:corpus.txt\n' \
    "$2" "$1" >bad.ini
  if LD_LIBRARY_PATH="$WORK" DLGAUGE_PLUGIN_PATH=$PLUG DLGAUGE_NN_MODULE_DIR=$FAKE \
    "$DLG" run bad.ini >bad.out 2>&1; then
    echo "fakegpu_run: precision = $1 on $2 ran"; exit 1
  fi
  grep -q "$3" bad.out || { echo "fakegpu_run: precision = $1 on $2:"; cat bad.out; exit 1; }
}
refused bf16 cuda:0 "on CUDA its mixed precision is fp16"
refused fp16 cpu "'fp16' needs a CUDA device"
echo "fakegpu_run: refusals ok"
