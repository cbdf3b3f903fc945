#!/bin/bash
# Two ranks refuse what they cannot measure, and say what they do:
#  1. --resume under another count of ranks is refused naming both (it
#     used to continue the 2-rank run alone, rows of 2 and 1 ranks under
#     one run_id);
#  2. a value that differs per rank (batch = ${B}) is refused naming it
#     (only iterations, warmup and repeat were compared), a path is not;
#  3. rank 1 killed: rank 0's stop line no longer promises a partial row
#     that mpirun's kill never lets it write;
#  4. report and compare run where a rank variable is set (they exited 0
#     with nothing written);
#  5. io-pipeline shards the stream over the ranks (each read all of it);
#  6. lstm-ptb with a text file per rank: refused at the first step naming
#     both files and the first word that differs (it trained on word ids
#     that meant different words);
#  7. preprocess under 2 ranks: rank 0 alone writes (both wrote one .part,
#     the second rename failed and MPI_Abort lost the later cells).
# Arguments as ranks.sh: DLGAUGE PLUGIN_DIR TEST_PLUGIN_DIR WORK MPIEXEC.
source "$(dirname "$0")/ranks_lib.sh"

# rows CSV PYTHON: PYTHON's asserts on rows, the rows of CSV
rows() { rows_csv "$1" "$2" "job status ranks items epochs images_written error"; }

HEAD='[global]\nisolation = none\n'

# 1. a 2-rank run stopped in its second cell, resumed by one process alone
{
    printf "[sink csv]\npath = %s\n$HEAD" "$WORK/rs.csv"
    job first iterations=5
    job long iterations=10000000 allreduce=true stop_step_rank=1
    job third iterations=5
} >rs.ini
run_np rs -q run rs.ini
[ "$RC" = 143 ] || fail "rs: exit $RC, expected 143: $(cat rs.err)"
run_cli rs1 -q run rs.ini --resume
expect_one_error rs1 2 'rs-[0-9a-f]+\.journal: run [^ ]+ ran on 2 ranks on 1 node, this one on 1 rank on 1 node: resume it with 2 ranks on 1 node \(mpirun -np 2\)'
rows "$WORK/rs.csv" 'assert [(r["job"], r["status"], r["ranks"]) for r in rows] == [("first", "ok", "2"), ("long", "partial", "2")], "no row of 1 rank"'

# 2. batch = ${B} from each rank's environment: refused, rank 1 naming it;
# a path of each rank's own (a shard) is no difference
printf "$HEAD" >mp.ini
job a iterations=5 'spin_us = ${B}' 'hold_mib = 1,2' >>mp.ini
run_mpi mp -np 1 env B=4 "$DLG" --plugin-dir "$PLUGDIR" -q run mp.ini : -np 1 env B=64 "$DLG" --plugin-dir "$PLUGDIR" -q run mp.ini
[ "$RC" = 2 ] || fail "mp: exit $RC, expected 2: $(cat mp.err)"
grep -q '^rank 1: dlgauge: this rank planned 2 cells in 1 job (shape [0-9a-f]*), rank 0 2 cells in 1 job (shape [0-9a-f]*): \[job a\] cell 0: spin_us = 64 here, 4 on rank 0: every rank must run the same file' mp.err ||
    fail "mp: $(cat mp.err)"
run_mpi mpok -np 1 env B=4 "$DLG" --plugin-dir "$PLUGDIR" -q run mp.ini : -np 1 env B=4 "$DLG" --plugin-dir "$PLUGDIR" -q run mp.ini
[ "$RC" = 0 ] || fail "mpok: exit $RC: $(cat mpok.err)"

# 3. rank 1 killed -9 in a cell whose steps allreduce: mpirun ends rank 0
# (SIGTERM, then SIGKILL); rank 0's line says that cell's row is lost
{
    printf "[sink csv]\npath = %s\n$HEAD" "$WORK/k9.csv"
    job first iterations=5
    job long iterations=100000000 allreduce=true
    job after iterations=5
} >k9.ini
rm -f r1.pid
timeout -k 5 60 "${MPIRUN[@]}" -np 1 "$DLG" --plugin-dir "$PLUGDIR" -q run k9.ini : \
    -np 1 bash -c 'echo $$ >r1.pid; exec "$0" "$@"' "$DLG" --plugin-dir "$PLUGDIR" -q run k9.ini >k9.out 2>k9.err &
mpi=$!
for _ in $(seq 200); do [ -s "$WORK/k9.csv" ] && [ -s r1.pid ] && break; sleep 0.05; done
sleep 0.5 # in the long cell
kill -9 "$(cat r1.pid)"
wait $mpi
grep -q '^dlgauge: stopping: .*if a rank died (mpirun.s message names it), mpirun ends every rank and that cell.s row is lost' k9.err ||
    fail "k9: rank 0's stop line: $(grep stopping k9.err)"
rows "$WORK/k9.csv" 'assert [r["job"] for r in rows] == ["first"], "the long cell has no row"'

# 4. report and compare where a launcher's rank variable is set
PMIX_RANK=1 OMPI_COMM_WORLD_RANK=1 "$DLG" report "$WORK/rs.csv" --html "$WORK/rs.html" >rep.out 2>rep.err
[ $? = 0 ] && [ -s "$WORK/rs.html" ] || fail "report under PMIX_RANK=1: no HTML: $(cat rep.err)"
PMIX_RANK=1 "$DLG" compare "$WORK/rs.csv" -- "$WORK/rs.csv" >cmp.out 2>cmp.err
grep -q '^dlgauge compare: ' cmp.out || fail "compare under PMIX_RANK=1 printed nothing: $(cat cmp.err)"

# 5. io-pipeline: 2 ranks x 4 steps x batch 2 of an 8-record set are one
# epoch each alone, two together: rank 0's last batch is in epoch 1 when
# the ranks share one stream, epoch 0 when each reads the whole.  Its
# fields are the job's: 2 x 4 computes of 20 ms (rank 0's own: 4), all
# 16 samples over the slowest rank's window, AU at most 1
if [ -f "$PLUGDIR/tools.so" ]; then
    printf "[sink csv]\npath = %s\n$HEAD[job io]\nworkload = io-pipeline\ndata = synthetic:8\nbatch = 2\nwarmup = 0\niterations = 4\ncompute = 20ms\n" "$WORK/io.csv" >io.ini
    run_np io -q run io.ini
    expect_rc io 0
    rows "$WORK/io.csv" '
assert [(r["status"], r["ranks"], r["items"], r["epochs"]) for r in rows] == [("ok", "2", "16", "1")], "sharded"
r = rows[0]
c, sps, au, wall = float(r["compute_s"]), float(r["samples_per_s"]), float(r["au"]), float(r["wall_s"])
print({k: r[k] for k in ("compute_s", "samples_per_s", "au", "wall_s", "loader_busy")})
assert 0.16 <= c < 0.4, f"compute_s {c}: not both ranks'"'"' 8 x 20 ms"
assert 0 < au <= 1 and sps * wall >= 16 * 0.9, f"samples_per_s {sps} x {wall} s: not the 16 of both ranks"
'

    # 7. preprocess (3 passes of 8 images, a rename each) then a reader,
    # under 2 ranks: rank 0 writes, both rows ok
    run_cli imgs mkdata images --out "$WORK/imgs" --classes 2 --images 8
    expect_rc imgs 0
    {
        printf "[sink csv]\npath = %s\n$HEAD" "$WORK/pp.csv"
        printf '[job pp]\nworkload = preprocess\ninput = %s\noutput = recordio:%s\nwarmup = 0\niterations = 24\nchunk = 1\n' "$WORK/imgs/train.lst" "$WORK/pp.rec"
        printf '[job io]\nworkload = io-pipeline\ndata = recordio:%s\nbatch = 2\nwarmup = 0\niterations = 2\ncompute = 0\n' "$WORK/pp.rec"
    } >pp.ini
    run_np pp -q run pp.ini
    expect_rc pp 0
    rows "$WORK/pp.csv" 'assert [(r["job"], r["status"], r["images_written"]) for r in rows] == [("pp", "ok", "24"), ("io", "ok", "")], "rank 0 wrote"'
else
    echo "tools.so not built: cases 5 and 7 are left out"
fi

# 6. lstm-ptb, a text per rank: refused naming both and the first word
if [ -f "$PLUGDIR/mxnet.so" ]; then
    run_cli t0 mkdata text --out "$WORK/ptb0.txt" --words 3000 --vocab 200 --seed 1
    run_cli t1 mkdata text --out "$WORK/ptb1.txt" --words 3000 --vocab 200 --seed 2
    lm='[job lm]\nworkload = lstm-ptb\nsize = small\nhidden = 16\nbptt = 5\nbatch = 2\nvocab = 100\nlayers = 1\nwarmup = 1\niterations = 2\n'
    printf "$HEAD$lm"'data = text:%s/ptb${OMPI_COMM_WORLD_RANK}.txt\n' "$WORK" >lm.ini
    run_np lm -q run lm.ini
    [ "$RC" != 0 ] || fail "lm: exit 0"
    grep -q "^dlgauge: lm.ini:[0-9]*: \[job lm\] lstm-ptb: rank 1's vocabulary (from $WORK/ptb1.txt) numbers words unlike rank 0's (from $WORK/ptb0.txt): word id [0-9]* is '[^']*' there, '[^']*' on rank 0 (100 and 100 words)" lm.err ||
        fail "lm: $(cat lm.err)"
    printf "$HEAD$lm"'data = text:%s/ptb0.txt\n' "$WORK" >lm0.ini
    run_np lm0 -q run lm0.ini
    [ "$RC" = 0 ] || fail "lm0: one corpus: exit $RC: $(cat lm0.err)"
else
    echo "mxnet.so not built: case 6 is left out"
fi

finish
