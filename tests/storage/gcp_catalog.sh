# The shipped GCP catalog names only disks that have a profile: a report
# with it gives no "no disk profile" warning, both from the source tree and
# (profiles found next to the catalog) from elsewhere.
#   bash gcp_catalog.sh DLGAUGE WORK_DIR
set -u
DLG=$(realpath "$1")
WORK=$(realpath -m "$2")
SRC=${DLG_SOURCE_DIR:?}
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
"$DLG" report "$SRC/tests/report/fixtures/known.csv" --catalog "$SRC/conf/instances/gcp.ini" >out.txt 2>err.txt ||
    { echo "FAIL: report: $(cat err.txt)" >&2; exit 1; }
if grep -q "no disk profile" err.txt; then
    echo "FAIL: gcp.ini names a disk no profile describes: $(cat err.txt)" >&2
    exit 1
fi
for d in gcp-pd-balanced gcp-pd-ssd gcp-pd-standard gcp-hyperdisk-balanced; do
    grep -q "^disks = .*$d" "$SRC/conf/instances/gcp.ini" || { echo "FAIL: no instance lists $d" >&2; exit 1; }
done
exit 0
