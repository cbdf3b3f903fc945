#!/usr/bin/env bash
# gpu-bundle.sh — pack this machine's dlgauge build for the lent GPU machine,
# so that scripts/gpu-check.sh can run `dlgauge sysinfo` and `dlgauge run`
# there: that machine has CUDA, cuDNN and NCCL but no package registry, so
# none of the Debian libraries dlgauge links (inih, libcsv, json-c, oneDNN,
# libjpeg-turbo, liblmdb, liburing...).
#
# It brings the build up to date (cmake --build), installs it (cmake
# --install) into a staging folder, notes which sources it was built from
# (scripts/gpu-sources-hash.sh: gpu-check.sh warns when the tree beside it
# differs), drops what the check does not run (headers, CMake and
# pkg-config files, the static engine, docs, the InfluxDB sink and its
# dozen libcurl libraries), copies into lib/deps every shared library the
# program and its plugins need that is not part of the base system of any
# Linux with a C++ compiler (glibc, libstdc++, libgcc_s, libgomp, zlib: the
# GPU machine's newer ones serve, and cuDNN wants them), and packs the
# folder as one gzip'd tar (oneDNN alone is 40 MB, and a device call
# carries 64 MiB with the working tree).
# CUDA's libraries (cudart, cuBLAS, cuDNN, NCCL) are not packed: the backend
# module loads the GPU machine's, which gpu-check.sh puts on LD_LIBRARY_PATH.
# The bundle is checked before it is packed: every library of every packed
# program resolves inside it or to that base set, and its dlgauge starts
# with nothing but the bundle on LD_LIBRARY_PATH.
#
# Usage: bash scripts/gpu-bundle.sh [--no-build] [BUILD_DIR [OUT_DIR]]
#   --no-build packs the build as it stands (the tests: a build other tests
#              are running from must not be relinked under them, as a
#              commit or an edit since the build would make it)
#   BUILD_DIR  a CMake build of dlgauge (default build; CUDA ON, as CI's)
#   OUT_DIR    default build-gpubundle (git ignores build*/); it gets
#              dlgauge-bundle.tar.gz, the only file a device call must carry:
#              carry ["build-gpubundle"], then gpu-check.sh finds it
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BRING_UP=1
[ "${1:-}" = --no-build ] && { BRING_UP=0; shift; }
BUILD=${1:-$ROOT/build}
OUT=${2:-$ROOT/build-gpubundle}
[ -f "$BUILD/CMakeCache.txt" ] || { echo "gpu-bundle: $BUILD is not a CMake build (bash scripts/build.sh build)" >&2; exit 2; }
grep -q '^DLG_WITH_CUDA:BOOL=ON' "$BUILD/CMakeCache.txt" ||
  { echo "gpu-bundle: $BUILD was configured with DLG_WITH_CUDA=OFF: it cannot use a GPU" >&2; exit 2; }
# the build as these sources make it (a no-op when it is up to date)
mkdir -p "$OUT" || exit 1
if [ $BRING_UP = 1 ]; then
  cmake --build "$BUILD" > "$OUT/build.log" 2>&1 ||
    { echo "gpu-bundle: building $BUILD failed:" >&2; tail -20 "$OUT/build.log" >&2; exit 1; }
fi
STAGE=$OUT/stage
rm -rf "$STAGE" && mkdir -p "$STAGE" || exit 1
cmake --install "$BUILD" --prefix "$STAGE" > "$OUT/install.log" 2>&1 ||
  { echo "gpu-bundle: cmake --install failed:" >&2; tail -20 "$OUT/install.log" >&2; exit 1; }
rm -rf "$STAGE/include" "$STAGE/share/doc" "$STAGE/lib/cmake" "$STAGE/lib/pkgconfig" \
  "$STAGE"/lib/*.a "$STAGE/lib/dlgauge/influx.so"
[ -x "$STAGE/bin/dlgauge" ] && [ -f "$STAGE/lib/dlgauge/backends/cuda.so" ] ||
  { echo "gpu-bundle: the install has no bin/dlgauge or lib/dlgauge/backends/cuda.so" >&2; exit 1; }

# the base system: libraries the GPU machine has in newer versions
base='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s|libgomp|libz)\.so'
# CUDA's, which the GPU machine provides (only the backend modules use them)
cuda='^lib(cudart|cublas|cublasLt|cudnn|nccl|nvidia-ml)\.so'
mkdir -p "$STAGE/lib/deps"
elfs() { find "$STAGE/bin" "$STAGE/lib" -type f \( -name '*.so*' -o -perm -u+x \) ! -name '*.sh' ! -name '*.py'; }
fail=0
for f in $(elfs); do
  case "$f" in */lib/dlgauge/backends/*) continue ;; esac
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    [[ $name =~ $base ]] || [[ $name =~ $cuda ]] && continue
    [ -e "$STAGE/lib/$name" ] || [ -e "$STAGE/lib/deps/$name" ] && continue
    if [ "$path" = not ]; then
      echo "gpu-bundle: ${f#$STAGE/} needs $name, which is not installed here" >&2; fail=1; continue
    fi
    cp -L "$path" "$STAGE/lib/deps/$name" || fail=1
  done < <(LD_LIBRARY_PATH=$STAGE/lib/deps:$STAGE/lib ldd "$f" 2>/dev/null)
done
[ $fail = 0 ] || exit 1
# every library resolves inside the bundle or to the base set (the backend
# modules to CUDA's too); none resolves to this machine's other libraries
for f in $(elfs); do
  while read -r name arrow path _; do
    [ "$arrow" = "=>" ] || continue
    [[ $name =~ $base ]] && continue
    case "$f" in */lib/dlgauge/backends/*) [[ $name =~ $cuda ]] && continue ;; esac
    case "$path" in "$STAGE"/*) ;; *)
      echo "gpu-bundle: ${f#$STAGE/} would load $name from $path, outside the bundle" >&2; fail=1 ;;
    esac
  done < <(LD_LIBRARY_PATH=$STAGE/lib/deps:$STAGE/lib ldd "$f" 2>/dev/null)
done
[ $fail = 0 ] || exit 1
v=$(env -i LD_LIBRARY_PATH="$STAGE/lib/deps:$STAGE/lib" "$STAGE/bin/dlgauge" version 2>&1) ||
  { echo "gpu-bundle: the bundled dlgauge does not start: $v" >&2; exit 1; }
# which sources it was built from: gpu-check.sh compares its own tree's
# (a bundle packed before the last edit would test other code)
bash "$ROOT/scripts/gpu-sources-hash.sh" "$ROOT" > "$STAGE/share/dlgauge/bundle-sources" || exit 1
rm -f "$OUT/dlgauge-bundle.tar.gz"
tar -C "$STAGE" -czf "$OUT/dlgauge-bundle.tar.gz" . || exit 1
rm -rf "$STAGE"
echo "gpu-bundle: $OUT/dlgauge-bundle.tar.gz, $(du -m "$OUT/dlgauge-bundle.tar.gz" | cut -f1) MiB: $v," \
  "libraries $(tar -tzf "$OUT/dlgauge-bundle.tar.gz" | grep -c '^./lib/deps/.') packed"
