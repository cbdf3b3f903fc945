# Workload inputs a run must judge right: precision = bf16 on a CPU whose
# oneDNN has no bf16 kernels is refused by --dry-run at the key's line (as
# setup would refuse every cell), and an im2rec .lst from mkdata is a
# files: dataset whose labels the workloads read.
source "$(dirname "$0")/lib.sh"

# line_of KEY FILE: the line KEY is set on
line_of() { grep -n "^$1 *=" "$2" | head -1 | cut -d: -f1; }

# ---- bf16 without AVX-512 (ONEDNN_MAX_CPU_ISA=AVX2 stands for such a CPU) -------------
ini bf16.ini <<'EOF'
[job cnn]
workload = alexnet
device = cpu
precision = bf16
batch = 2
crop = 67
iterations = 1
warmup = 0
EOF
ini bf16_lm.ini <<'EOF'
[job lm]
workload = lstm-ptb
device = cpu
precision = bf16
data = synthetic
iterations = 1
warmup = 0
EOF
export ONEDNN_MAX_CPU_ISA=AVX2
run_cli bf16 run bf16.ini --dry-run
if [ "$RC" = 0 ]; then
    # the check let it pass: a cell shows whether oneDNN heeds the variable here
    run_cli bf16_cell run --set job.isolation=none bf16.ini
    if grep -q "needs AVX-512" bf16_cell.err; then
        fail "bf16: --dry-run exit 0, but the cell fails: $(grep -m1 'needs AVX-512' bf16_cell.err)"
    elif ! grep -q "cpu-bf16" bf16_cell.out bf16_cell.err; then
        echo "SKIP bf16: ONEDNN_MAX_CPU_ISA=AVX2 does not change oneDNN's ISA here"
    fi
elif grep -q "which this build lacks" bf16.err; then
    echo "SKIP bf16: this build has no oneDNN"
else
    expect_one_error bf16 2 "bf16\.ini:$(line_of precision bf16.ini): " \
        'precision = bf16 on the cpu needs AVX-512 .*ONEDNN_MAX_CPU_ISA.*use precision = fp32'
    run_cli bf16_lm run bf16_lm.ini --dry-run
    expect_one_error bf16_lm 2 "bf16_lm\.ini:$(line_of precision bf16_lm.ini): " \
        'precision = bf16 on the cpu needs AVX-512'
    # device = auto on a machine without a GPU comes to the same CPU
    if [ ! -e /dev/nvidia0 ]; then
        grep -v '^device' bf16.ini >bf16_auto.ini
        run_cli bf16_auto run bf16_auto.ini --dry-run
        expect_one_error bf16_auto 2 "bf16_auto\.ini:$(line_of precision bf16_auto.ini): " \
            'precision = bf16 on the cpu needs AVX-512.*\(device = auto found no CUDA device\)'
    fi
    # fp32 is untouched by it
    sed 's/^precision = bf16/precision = fp32/' bf16.ini >fp32.ini
    run_cli fp32 run fp32.ini --dry-run
    expect_rc fp32 0
fi
unset ONEDNN_MAX_CPU_ISA

# ---- files: an im2rec .lst as mkdata writes it ------------------------------------------
run_cli mk mkdata images --out d --classes 3 --images 12 --seed 3
expect_rc mk 0
ini lst.ini <<'EOF'
[sink csv]
path = lst.csv
[job pipe]
workload = io-pipeline
data = files:d/train.lst
batch = 4
threads = 1
crop = 32
iterations = 3
warmup = 0
[job cnn]
workload = alexnet
data = files:d/train.lst
classes = 3
batch = 2
crop = 67
iterations = 1
warmup = 0
EOF
run_cli lst run --set job.isolation=none --job pipe lst.ini
expect_rc lst 0
"$PY" - lst.csv <<'EOF' || fail "lst: $(cat lst.csv)"
import csv, sys
row = next(csv.DictReader(open(sys.argv[1])))
assert row["status"] == "ok" and row["dataset_items"] == "12", row
EOF
# the labels are read (a CNN compares them with classes at setup): 3 in the list, 5 asked
sed 's/^classes = 3/classes = 5/; s/^path = lst.csv/path = lst5.csv/' lst.ini >lst5.ini
run_cli lst5 run --set job.isolation=none --job cnn lst5.ini
expect_rc lst5 1
grep -q "classes = 5 but data = files:d/train.lst has 3 classes (labels 0..2)" lst5.err ||
    fail "lst5: no classes line: $(cat lst5.err)"
# a malformed line: one error naming the list's file and line
{ head -2 d/train.lst; printf '7\t2.5\t%s\n' "$(sed -n 3p d/train.lst | cut -f3)"; } >d/bad.lst
sed 's#files:d/train.lst#files:d/bad.lst#; s/^path = lst.csv/path = bad.csv/' lst.ini >bad.ini
run_cli bad run --set job.isolation=none --job pipe bad.ini
expect_rc bad 1
grep -q "d/bad.lst:3: label 2.5 is not a class index (an integer)" bad.err || fail "bad: $(cat bad.err)"

finish
