#!/usr/bin/env bash
# gpu-sources-hash.sh ROOT — one line naming the sources a dlgauge build is
# made from (core, plugins, sinks, include, the CMake files): a sha256 over
# their paths and contents.  scripts/gpu-bundle.sh stores it in the bundle;
# scripts/gpu-check.sh computes it again on the GPU machine, where the tree
# travels without .git, and says when the bundle was packed from other
# sources than the ones beside it.
set -eu
cd "$1"
find core plugins sinks include cmake CMakeLists.txt -type d -name __pycache__ -prune -o \
  -type f ! -name '*.swp' ! -name '*.pyc' -print 2>/dev/null | LC_ALL=C sort | xargs -d '\n' sha256sum |
  sha256sum | cut -c1-16
