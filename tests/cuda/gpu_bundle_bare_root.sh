#!/bin/bash
# The bundle scripts/gpu-bundle.sh packs runs where none of dlgauge's
# Debian libraries is installed (the GPU machine): in a root holding only
# the base set the bundle leaves out (glibc, libstdc++, libgcc_s, libgomp,
# zlib) and the bundle, chroot'ed, its dlgauge generates data and runs
# scripts/gpu-check-run.ini's five jobs on the CPU (--set device = cpu,
# shrunk): oneDNN, libjpeg-turbo, the RecordIO writer and reader, the LSTM,
# and whatever a plugin opens at run time, from the bundle alone.  ldd,
# which gpu-bundle.sh checks, sees only what is linked.  Skipped (77)
# where chroot or a private mount namespace is not allowed (not root, a
# container).
# usage: gpu_bundle_bare_root.sh ROOT BUILD_DIR WORKDIR
set -u
ROOT=$1 BUILD=$2 W=$3
command -v unshare >/dev/null && command -v chroot >/dev/null || { echo "SKIP: no unshare or chroot"; exit 77; }
unshare -m true 2>/dev/null || { echo "SKIP: no private mount namespace here"; exit 77; }
rm -rf "$W" && mkdir -p "$W" || exit 1
bash "$ROOT/scripts/gpu-bundle.sh" --no-build "$BUILD" "$W/bundle" || { echo "FAIL gpu-bundle.sh"; exit 1; }
R=$W/root
mkdir -p "$R/lib/x86_64-linux-gnu" "$R/lib64" "$R/proc" "$R/dev" "$R/tmp" "$R/b" "$R/root" || exit 1
for l in libc.so.6 libm.so.6 libstdc++.so.6 libgcc_s.so.1 libgomp.so.1 libz.so.1 libpthread.so.0 libdl.so.2 \
         librt.so.1 libresolv.so.2 libutil.so.1; do
  f=$(ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ { print $NF; exit }')
  [ -n "$f" ] && cp -L "$f" "$R/lib/x86_64-linux-gnu/" || { echo "FAIL: no $l here to copy"; exit 1; }
done
cp -L /lib64/ld-linux-x86-64.so.2 "$R/lib64/" && tar -C "$R/b" -xzf "$W/bundle/dlgauge-bundle.tar.gz" &&
  cp "$ROOT/scripts/gpu-check-run.ini" "$R/" || exit 1
shrink=(--set job.warmup=1 --set job.iterations=2
  --set resnet50-auto.batch=1 --set resnet50-auto.crop=64 --set alexnet-jpeg.batch=2 --set alexnet-jpeg.crop=67
  --set alexnet-jpeg.classes=4 --set inception-rec.batch=1 --set inception-rec.crop=75 --set inception-rec.classes=4
  --set lstm-medium.hidden=32 --set lstm-medium.bptt=8 --set lstm-medium.batch=4 --set lstm-medium.vocab=500
  --set preprocess-rec.warmup=0 --set preprocess-rec.iterations=24)
for j in resnet50-auto alexnet-jpeg inception-rec lstm-medium; do
  shrink+=(--set "$j.device=cpu" --set "$j.precision=fp32")
done
# chroot's working folder is its /: the INI's relative paths land there
CHROOT=$(command -v chroot)
dlg() { env -i LD_LIBRARY_PATH=/b/lib/deps:/b/lib HOME=/root DLGAUGE_TUNE=off "$CHROOT" "$R" /b/bin/dlgauge "$@"; }
export -f dlg
export R CHROOT
unshare -m bash -c 'mount -t proc proc "$R/proc" && mount --bind /dev "$R/dev" || exit 3
  dlg mkdata images --out data --classes 4 --images 24 --threads 2 &&
  dlg mkdata text --out corpus.txt --words 20000 && dlg run /gpu-check-run.ini "$@"' _ "${shrink[@]}" \
  > "$W/run.log" 2>&1
rc=$?
[ $rc = 3 ] && { echo "SKIP: mount not allowed here"; cat "$W/run.log"; exit 77; }
python3 - "$R/run.csv" <<'PY' || { cat "$W/run.log"; exit 1; }
import csv, sys
try:
    rows = {r["job"]: r for r in csv.DictReader(open(sys.argv[1]))}
except OSError as e:
    sys.exit(f"FAIL: {e}")
want = ["resnet50-auto", "alexnet-jpeg", "preprocess-rec", "inception-rec", "lstm-medium"]
bad = [f"{j}: {rows.get(j, {}).get('status')} {rows.get(j, {}).get('error', '')}" for j in want
       if rows.get(j, {}).get("status") != "ok"]
if bad:
    sys.exit("FAIL in the bare root: " + "; ".join(bad))
print("ok: the bundle alone ran " + ", ".join(f"{j} ({float(rows[j]['throughput']):.4g} {rows[j]['unit']}/s)" for j in want))
PY
[ $rc = 0 ] || { echo "FAIL: dlgauge in the bare root exit $rc"; cat "$W/run.log"; exit 1; }
