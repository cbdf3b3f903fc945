# An LMDB dataset is read by liblmdb through its own mmap, past the job's
# storage: a job that names a storage (here a 1 MB/s throttle) over lmdb:
# would report that storage while measuring the page cache, so it is
# refused before any cell, in run and --dry-run alike, with one line at
# the storage key's line; the default storage (unset or posix) still runs.
#   bash lmdb_storage.sh DLGAUGE PLUGIN_DIR TEST_PLUGIN_DIR WORK_DIR
. "$(dirname "$0")/../e2e/lib.sh"

run_cli mkdata mkdata images --out data --classes 2 --images 8 --seed 3 --threads 1
expect_rc mkdata 0
ini prep.ini <<'EOT'
[job prep]
workload = preprocess
input = data/train.txt
output = lmdb:db
resize_width = 72
resize_height = 72
iterations = 8
warmup = 0
EOT
run_cli prep -q run prep.ini
expect_rc prep 0

# job WORKLOAD STORAGE_LINE [KEYS]: an lmdb: job reading through STORAGE_LINE
job() {
    printf '[storage slow]\ntype = throttle\nbandwidth = 1MB\n[job t]\nworkload = %s\n%s\n' "$1" "$2"
    printf 'data = lmdb:db\niterations = 2\nwarmup = 0\n%s\n' "${3:-}"
}
PIPE='decode = false
batch = 2
compute = 0
threads = 1'
NET='crop = 67
classes = 2
batch = 1
device = cpu'
WHY='storage = slow: data = lmdb:db is read by LMDB through its own mmap, which no storage backend sees'
job io-pipeline 'storage = slow' "$PIPE" >pipe.ini
run_cli pipe -q run pipe.ini
expect_one_error pipe 2 '^dlgauge: pipe\.ini:6: \[job t\] io-pipeline: ' "$WHY" 'recordio: or files:'
run_cli pipe-dry run --dry-run pipe.ini
expect_one_error pipe-dry 2 '^dlgauge: pipe\.ini:6: ' "$WHY"
# the caffe workloads' data layer says the same
job alexnet 'storage = slow' "$NET" >net.ini
run_cli net-dry run --dry-run net.ini
expect_one_error net-dry 2 '^dlgauge: net\.ini:6: \[job t\] alexnet: ' "$WHY"
# a storage named in [global] is said at that line
{ printf '[global]\nstorage = slow\n'; job io-pipeline '' "$PIPE"; } >glob.ini
run_cli glob run --dry-run glob.ini
expect_one_error glob 2 '^dlgauge: glob\.ini:2: ' "$WHY"

# the default storage, unset or named, reads the LMDB as before
job io-pipeline '' "$PIPE" >def.ini
run_cli def -q run def.ini
expect_rc def 0
job io-pipeline 'storage = posix' "$PIPE" >posix.ini
run_cli posix -q run posix.ini
expect_rc posix 0
grep -q 'slow\|mmap' def.err posix.err && fail "default storage: stderr says $(cat def.err posix.err)"
finish
