#!/bin/bash
# -DDLG_WITH_CUDA=OFF builds a CPU-only dlgauge (issue 5), with warnings as
# errors like CI's own build, and that build works: nothing it builds
# links a CUDA library, sysinfo says there is no CUDA backend, a job with
# device = cuda:0 fails with one line naming its file, line and why, and
# device = auto runs the same job on the CPU.  (CI builds with CUDA ON
# only, so without this the OFF build would rot unseen.)
# usage: cpu_only_build.sh SOURCE_DIR C_COMPILER WORKDIR
set -u
SRC=$1 CC=$2 W=$3
rm -rf "$W" && mkdir -p "$W" || exit 1
B=$W/build
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
# -Og, no -g: the OFF build compiles the main build's own C sources (only
# the CUDA modules drop out), so what it has to show is its configuration,
# its links and its behaviour; -Og keeps GCC's flow warnings
# (-Wmaybe-uninitialized) and builds in half RelWithDebInfo's time (65 ->
# 31 s of CPU here)
if ! cmake -S "$SRC" -B "$B" "${gen[@]}" -DCMAKE_BUILD_TYPE=None -DCMAKE_C_FLAGS=-Og -DCMAKE_C_COMPILER="$CC" \
     -DDLG_WITH_CUDA=OFF -DDLG_BUILD_TESTS=OFF -DDLG_WERROR=ON > "$W/configure.log" 2>&1; then
  echo "FAIL: configure with DLG_WITH_CUDA=OFF:"; tail -30 "$W/configure.log"; exit 1
fi
if ! cmake --build "$B" -j "$(nproc)" > "$W/build.log" 2>&1; then
  echo "FAIL: build with DLG_WITH_CUDA=OFF:"; grep -E 'error|warning' "$W/build.log" | head -30; exit 1
fi
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
dlg=$B/bin/dlgauge
[ -x "$dlg" ] || { echo "FAIL: no $dlg"; exit 1; }
[ ! -e "$B/lib/dlgauge/backends" ] || fail "a CUDA-less build made $B/lib/dlgauge/backends"
for f in "$dlg" "$B"/lib/*.so* "$B"/lib/dlgauge/*.so; do
  bad=$(ldd "$f" | awk '$1 ~ /^lib(cuda|cudart|cublas|cublasLt|cudnn|nccl|nvidia-ml)[.]/')
  [ -z "$bad" ] || fail "${f#$B/} links $bad"
done
export DLGAUGE_PLUGIN_PATH=$B/lib/dlgauge
out=$("$dlg" sysinfo 2>&1) || fail "sysinfo exit $?"
echo "$out" | grep -q '^cuda: *no backend (dlgauge was built without CUDA)$' ||
  fail "sysinfo's cuda line: $(echo "$out" | grep '^cuda:')"
cd "$W" || exit 1
cat > jobs.ini <<'INI'
[global]
sinks = csv

[sink csv]
path = r.csv

[job gpu]
workload = alexnet
device = cuda:0
batch = 1
crop = 67
warmup = 0
iterations = 1

[job auto]
workload = alexnet
device = auto
batch = 1
crop = 67
warmup = 0
iterations = 1
INI
"$dlg" run jobs.ini > run.out 2>&1
rc=$?
[ $rc = 1 ] || fail "run: exit $rc, not 1 (one cell failed)"
grep -q 'jobs.ini:9: \[job gpu\] alexnet: device = cuda:0: no CUDA backend can run here: no CUDA device (dlgauge was built without CUDA)$' run.out ||
  { fail "device = cuda:0's line:"; cat run.out; }
python3 - <<'PY' || fails=$((fails + 1))
import csv, sys
rows = {r["job"]: r for r in csv.DictReader(open("r.csv"))}
gpu, auto = rows.get("gpu", {}), rows.get("auto", {})
if gpu.get("status") != "error" or auto.get("status") != "ok" or auto.get("backend") != "cpu" \
        or not float(auto.get("throughput") or 0) > 0:
    sys.exit("FAIL rows: gpu %r, auto %r" % ({k: gpu.get(k) for k in ("status", "error")},
                                           {k: auto.get(k) for k in ("status", "backend", "throughput")}))
PY
[ $fails = 0 ] && echo "ok: DLG_WITH_CUDA=OFF builds -Werror clean; device = cuda:0 refused, auto on the cpu"
exit $((fails > 0))
