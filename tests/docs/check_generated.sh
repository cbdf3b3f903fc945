#!/usr/bin/env bash
# check_generated.sh DLGAUGE DOC TOPIC: the text after the "generated" marker
# in DOC must equal `dlgauge help --markdown TOPIC`.
set -euo pipefail
dlgauge=$1 doc=$2 topic=$3
want=$("$dlgauge" help --markdown "$topic")
have=$(sed -n '/^<!-- Everything below is generated/,$p' "$doc" | tail -n +3)
if [ "$want" != "$have" ]; then
  diff <(echo "$have") <(echo "$want") | head -20
  echo "FAIL: $doc is stale; regenerate its tail with: dlgauge help --markdown $topic"
  exit 1
fi
echo "ok: $doc matches the code"
