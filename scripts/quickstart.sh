#!/usr/bin/env bash
# The README's first command: set up, build, and run the quick-start suite
# (conf/quickstart.ini) on this machine; results land in results/.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
bash scripts/setup.sh
bash scripts/build.sh build
./build/bin/dlgauge sysinfo
./build/bin/dlgauge run conf/quickstart.ini "$@"
echo "quickstart: results in results/quickstart.csv and results/quickstart.jsonl"
