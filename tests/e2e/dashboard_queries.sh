#!/usr/bin/env bash
# The Grafana dashboard's own queries (docs/dashboards/dlgauge.json) against
# a real influxd holding a two-cell sweep (sleep = 1ms, 2ms, not a key the
# dashboard could name): every result panel shows each cell on its own
# (one series or row per cell, with that cell's throughput, never one cell
# hidden or the two averaged), progress panels one series per cell, and
# the run_id and job variables list a run that has progress points only
# (its first cell still running).
set -euo pipefail
dlgauge=$1 server=$2 dash=$3
source "$(dirname "$server")/influx_test_server.sh"
influx_test_start "$server" dash
cd "$work"
cat > r1.ini <<INI
[global]
run_id = r1
[sink influx]
url       = $url/write?db=dash
spool_dir = $work/spool
[sink csv]
path = $work/r1.csv
[job a]
workload   = sleep
sleep      = 450ms, 500ms
iterations = 3
min_steps  = 1
warmup     = 0
INI
"$dlgauge" -q run r1.ini > run.out 2> run.err || { echo "FAIL: the run exited non-zero"; cat run.err; exit 1; }
# a run whose first cell is still running: progress points alone
now=$(date +%s%N)
curl -sf -XPOST "$url/write?db=dash" --data-binary \
  "dlgauge_progress,cell=0,host=h,job=live,run_id=live1,workload=sleep step_rate=1 $now" >/dev/null
python3 - "$url" "$dash" r1.csv <<'PY'
import csv, json, re, sys, urllib.parse, urllib.request
url, dash_path, csv_path = sys.argv[1:4]
dash = json.load(open(dash_path))
def q(text):
    u = url + "/query?" + urllib.parse.urlencode({"db": "dash", "q": text})
    r = json.load(urllib.request.urlopen(u))["results"][0]
    if "error" in r:
        sys.exit("FAIL: InfluxDB refused %r: %s" % (text, r["error"]))
    return r.get("series", [])
fails = []
rows = list(csv.DictReader(open(csv_path)))
want = sorted(round(float(r["throughput"]), 6) for r in rows)
assert len(want) == 2, want
for v in dash["templating"]["list"]:
    got = {s2[1] for s in q(v["query"]) for s2 in s["values"]}
    need = {"run_id": {"r1", "live1"}, "job": {"a", "live"}}[v["name"]]
    if not need <= got:
        fails.append("variable %s lists %s, not %s" % (v["name"], sorted(got), sorted(need)))
subst = {"$run_id": "r1|live1", "$job": ".*", "$timeFilter": "time > now() - 1d", "$__interval": "1d"}
for p in dash["panels"]:
    for t in p.get("targets", []):
        text = t["query"]
        for k, v in subst.items():
            text = text.replace(k, v)
        alias = t.get("alias") or ""
        if re.search(r"(\w+ \$tag_\w+) \1", alias):
            fails.append("%s: alias %r repeats itself" % (p["title"], alias))
        series = q(text)
        if "dlgauge_progress" in text:
            cells = {(s["tags"].get("run_id"), s["tags"].get("job"), s["tags"].get("cell")) for s in series
                     if s["tags"].get("job") == "a"}
            if len(cells) != 2 or len([s for s in series if s["tags"].get("job") == "a"]) != 2:
                fails.append("%s: %d series for the 2 cells of job a" % (p["title"], len(series)))
            continue
        if not series and "power_avg_w" in text:
            continue  # no GPU: the field does not exist
        if t.get("resultFormat") == "table":
            n = sum(len(s["values"]) for s in series)
        else:
            n = len(series)
        if n != 2:
            fails.append("%s: %d %s for the 2 cells" % (p["title"], n, "rows" if t.get("resultFormat") == "table"
                                                                 else "series"))
            continue
        if "throughput" in text:
            got = []
            for s in series:
                i = s["columns"].index("throughput") if "throughput" in s["columns"] else 1
                got += [round(v[i], 6) for v in s["values"] if v[i] is not None]
            if sorted(got) != want:
                fails.append("%s: throughput %s, the cells' %s" % (p["title"], sorted(got), want))
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
PY
echo "ok: every panel shows each cell"
