# Shared by the preprocess end-to-end tests (e2e/data_safety.sh,
# tools/prep_caffe.sh); sourced after lib.sh.

# prep_ini FILE JOB: a run file of one JSON sink (run.jsonl, one repetition)
# and job JOB converting data/train.txt (mkdata's list) to lmdb:db; the
# job's further lines, and any further sections, come from stdin.
prep_ini() {
    {
        printf '[global]\nsinks = j\nrepeat = 1\n[sink j]\ntype = json\npath = run.jsonl\n'
        printf '[job %s]\nworkload = preprocess\ninput = data/train.txt\noutput = lmdb:db\n' "$2"
        cat
    } >"$1"
}

# field JOB KEY: result field KEY of job JOB in run.jsonl ("" if absent)
field() {
    $PY -c 'import json, sys
for line in open("run.jsonl"):
    j = json.loads(line)
    if j["measurement"] == "dlgauge_result" and j["tags"]["job"] == sys.argv[1]:
        print(j["fields"].get(sys.argv[2], "")); break' "$1" "$2"
}
