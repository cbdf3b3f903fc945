#!/usr/bin/env python3
"""Reads dlgauge's result files back for the end-to-end tests.

    e2e_check.py suite DIR          the three sink files of suite.sh agree
    e2e_check.py accuracy CSV       the sleep runner-accuracy bounds
    e2e_check.py count CSV          number of result rows
    e2e_check.py get CSV ROW KEY... cells of one CSV row (0-based), one per line
    e2e_check.py lp FILE            parses a line-protocol file, prints the point count

Exits 1 with one line per failed check.
"""
import csv
import json
import sys

FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
    return cond


# ---- line protocol (https://docs.influxdata.com/influxdb/v1/write_protocols/line_protocol_reference/)
def _split(s, sep, respect_quotes):
    """Splits s at unescaped sep characters outside double quotes."""
    out, cur, i, quoted = [], [], 0, False
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            cur.append(s[i:i + 2])
            i += 2
            continue
        if respect_quotes and c == '"':
            quoted = not quoted
        if c == sep and not quoted:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    if quoted:
        raise ValueError("unterminated string")
    out.append("".join(cur))
    return out


def _unescape(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in ',= "\\':
            out.append(s[i + 1])
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def _field_value(v):
    if v.startswith('"'):
        if not v.endswith('"') or len(v) < 2:
            raise ValueError("bad string field " + v)
        return _unescape(v[1:-1])
    if v in ("true", "false"):
        return v == "true"
    if v.endswith("i") or v.endswith("u"):
        return int(v[:-1])
    f = float(v)
    if f != f or f in (float("inf"), float("-inf")):
        raise ValueError("non-finite float " + v)
    return f


def parse_lp_line(line):
    parts = _split(line, " ", True)
    if len(parts) != 3:
        raise ValueError("expected 'series fields timestamp', got %d parts" % len(parts))
    series = _split(parts[0], ",", False)
    tags = []
    for t in series[1:]:
        kv = _split(t, "=", False)
        if len(kv) != 2 or not kv[0] or not kv[1]:
            raise ValueError("bad tag " + t)
        tags.append((_unescape(kv[0]), _unescape(kv[1])))
    if [k for k, _ in tags] != sorted(k for k, _ in tags):
        raise ValueError("tags not sorted by key")
    fields = {}
    for f in _split(parts[1], ",", True):
        kv = _split(f, "=", True)
        if len(kv) != 2 or not kv[0]:
            raise ValueError("bad field " + f)
        fields[_unescape(kv[0])] = _field_value(kv[1])
    if not fields:
        raise ValueError("no fields")
    return {"measurement": _unescape(series[0]), "tags": dict(tags), "fields": fields,
            "time_ns": int(parts[2])}


def read_lp(path):
    points = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            try:
                points.append(parse_lp_line(line))
            except ValueError as e:
                FAILS.append("%s:%d: line protocol does not parse: %s" % (path, n, e))
    return points


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def read_csv(path):
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        FAILS.append("cannot read %s: %s" % (path, e))
        return [], []
    if not rows:
        FAILS.append("%s is empty" % path)
        return [], []
    for n, r in enumerate(rows[1:], 2):
        check(len(r) == len(rows[0]), "%s:%d: %d columns, header has %d" % (path, n, len(r), len(rows[0])))
    return rows[0], [dict(zip(rows[0], r)) for r in rows[1:]]


def results(points):
    return [p for p in points if p["measurement"] == "dlgauge_result"]


# ---- suite.sh: 3 sleep cells + 2x2 stream cells + 2 threads cells, in this
# order; mem's `threads` metric sits in the threads tag column that job
# sweep's axis opened
SUITE_CELLS = [("naps", {"sleep": "1ms"}), ("naps", {"sleep": "2ms"}), ("naps", {"sleep": "3ms"}),
               ("mem", {"cpus": "0", "kernel": "copy", "threads": "1"}),
               ("mem", {"cpus": "0", "kernel": "triad", "threads": "1"}),
               ("mem", {"cpus": "1", "kernel": "copy", "threads": "1"}),
               ("mem", {"cpus": "1", "kernel": "triad", "threads": "1"}),
               ("sweep", {"threads": "1"}), ("sweep", {"threads": "2"})]
SWEPT = {"sleep", "cpus", "kernel", "threads"}
CORE_TAGS = ["host", "job", "run_id", "status", "workload"]
CORE_FIELDS_HEAD = ["throughput", "throughput_ci95", "throughput_stddev", "unit", "items", "steps",
                    "repeats", "warmup_steps", "wall_s"]
COMPARED = ["throughput", "steps", "items", "wall_s", "latency_p50_us", "latency_max_us", "unit",
            "cpus_used", "sleep_ns", "copy_bytes_per_s", "triad_bytes_per_s", "array_bytes"]


def csv_value(text, like):
    """The CSV text as the type of the JSON value it must equal."""
    if isinstance(like, bool):
        return text == "true"
    if isinstance(like, int):
        return int(text)
    if isinstance(like, float):
        return float(text)
    return text


def suite(d):
    header, crows = read_csv(d + "/results.csv")
    jrows = results(read_jsonl(d + "/results.jsonl"))
    lrows = results(read_lp(d + "/results.lp"))
    n = len(SUITE_CELLS)
    check(len(crows) == n, "CSV has %d rows, expected %d cells" % (len(crows), n))
    check(len(jrows) == n, "JSON has %d results, expected %d" % (len(jrows), n))
    check(len(lrows) == n, "line protocol has %d results, expected %d" % (len(lrows), n))
    tags = sorted(CORE_TAGS + list(SWEPT))
    check(header[0] == "time", "CSV column 1 is %r, not time" % header[0])
    check(header[1:1 + len(tags)] == tags, "CSV tag columns %r, expected %r" % (header[1:1 + len(tags)], tags))
    head = header[1 + len(tags):1 + len(tags) + len(CORE_FIELDS_HEAD)]
    check(head == CORE_FIELDS_HEAD, "CSV field columns start %r, expected %r" % (head, CORE_FIELDS_HEAD))
    for col in ["latency_p50_us", "error", "sleep_ns", "triad_bytes_per_s", "copy_bytes_per_s"]:
        check(col in header, "CSV header lacks %s" % col)
    check(len(set(header)) == len(header), "CSV header has a duplicate column")
    for i, (job, swept) in enumerate(SUITE_CELLS[:min(n, len(crows), len(jrows), len(lrows))]):
        c, j, lp = crows[i], jrows[i], lrows[i]
        where = "cell %d (%s %s)" % (i, job, swept)
        for name, t in (("CSV", {k: c[k] for k in tags if c.get(k)}), ("JSON", j["tags"]), ("LP", lp["tags"])):
            check(t.get("job") == job, "%s %s: job tag %r" % (name, where, t.get("job")))
            check(t.get("status") == "ok", "%s %s: status %r" % (name, where, t.get("status")))
            check(t.get("run_id") == "e2e-suite", "%s %s: run_id %r" % (name, where, t.get("run_id")))
            check({k: v for k, v in t.items() if k in SWEPT} == swept,
                  "%s %s: swept tags %r" % (name, where, {k: v for k, v in t.items() if k in SWEPT}))
        check(j["tags"] == lp["tags"], "%s: JSON tags %r != LP tags %r" % (where, j["tags"], lp["tags"]))
        check(j["time_ns"] == lp["time_ns"], "%s: JSON time_ns != LP timestamp" % where)
        check(c["time"] == j["time"], "%s: CSV time %r != JSON time %r" % (where, c["time"], j["time"]))
        for k in COMPARED:
            jv, lv = j["fields"].get(k), lp["fields"].get(k)
            check(jv == lv, "%s: %s differs: JSON %r, LP %r" % (where, k, jv, lv))
            if jv is None:
                check(c.get(k, "") == "", "%s: %s is %r in CSV but absent in JSON" % (where, k, c.get(k)))
            else:
                check(csv_value(c.get(k, ""), jv) == jv, "%s: %s differs: CSV %r, JSON %r" % (where, k, c.get(k), jv))
        f = j["fields"]
        check("threads" not in f and "threads" not in lp["fields"],
              "%s: threads is a field as well as a tag column" % where)
        if job == "naps":
            want_ns = int(swept["sleep"][:-2]) * 1000000
            check(f.get("steps") == 4 and f.get("items") == 4, "%s: steps %r items %r, expected 4" % (where, f.get("steps"), f.get("items")))
            check(f.get("sleep_ns") == want_ns, "%s: sleep_ns %r, expected %d" % (where, f.get("sleep_ns"), want_ns))
            # never faster than the sleep allows (accuracy.sh checks how close)
            check(0 < f.get("throughput", 0) <= 1e9 / want_ns,
                  "%s: throughput %r steps/s is impossible for a %d ns sleep" % (where, f.get("throughput"), want_ns))
            check(f.get("unit") == "steps", "%s: unit %r" % (where, f.get("unit")))
        elif job == "sweep":
            check(f.get("steps") == 2, "%s: steps %r, expected 2" % (where, f.get("steps")))
            check(f.get("copy_bytes_per_s", 0) > 0, "%s: no copy_bytes_per_s" % where)
        else:
            kernel = swept["kernel"]
            other = "triad" if kernel == "copy" else "copy"
            check(f.get("steps") == 3, "%s: steps %r, expected 3" % (where, f.get("steps")))
            check(f.get(kernel + "_bytes_per_s", 0) > 0, "%s: no %s_bytes_per_s" % (where, kernel))
            check(other + "_bytes_per_s" not in f, "%s: %s_bytes_per_s reported for kernel %s" % (where, other, kernel))
            check(f.get("array_bytes") == 262144, "%s: array_bytes %r" % (where, f.get("array_bytes")))
            if swept["cpus"] == "1":
                check(f.get("cpus_used") == 1, "%s: cpus_used %r, expected 1" % (where, f.get("cpus_used")))
            # items = bytes moved: 2 arrays for copy, 3 for triad, per step
            per = 2 if kernel == "copy" else 3
            check(f.get("items") == 3 * per * 262144, "%s: items %r" % (where, f.get("items")))
            check(f.get("unit") == "bytes", "%s: unit %r" % (where, f.get("unit")))


def accuracy(path):
    _, rows = read_csv(path)
    if not check(len(rows) == 1, "%d rows, expected 1" % len(rows)):
        return
    r = rows[0]
    check(r["status"] == "ok", "status %r: %s" % (r["status"], r.get("error")))
    check(int(r["steps"]) == 40 and int(r["repeats"]) == 2, "steps %s repeats %s, expected 40 and 2" % (r["steps"], r["repeats"]))
    p50 = float(r["latency_p50_us"])
    check(20000 <= p50 <= 21500, "latency_p50_us %g outside [20000, 21500]" % p50)
    check(float(r["latency_min_us"]) >= 20000, "latency_min_us %s: a step slept less than asked" % r["latency_min_us"])
    thr = float(r["throughput"])
    check(abs(thr - 50.0) <= 0.07 * 50.0, "throughput %g steps/s, expected 50 within 7%%" % thr)
    check(float(r["requested_ns_mean"]) == 20e6, "requested_ns_mean %s" % r["requested_ns_mean"])
    # two repetitions: ci95 = t(0.975, 1 dof) * stddev / sqrt(2), t = 12.7062
    ci, sd = float(r["throughput_ci95"]), float(r["throughput_stddev"])
    check(sd <= 0.07 * 50.0, "throughput_stddev %g over 2 repetitions" % sd)
    check(abs(ci - 12.7062 * sd / 2 ** 0.5) <= 0.005 * ci + 1e-9,
          "throughput_ci95 %g is not 12.7062 x stddev %g / sqrt(2)" % (ci, sd))


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "suite":
        suite(argv[2])
    elif cmd == "accuracy":
        accuracy(argv[2])
    elif cmd == "count":
        print(len(read_csv(argv[2])[1]))
    elif cmd == "get":
        rows = read_csv(argv[2])[1]
        row = int(argv[3])
        if row >= len(rows):
            FAILS.append("%s has no row %d" % (argv[2], row))
        else:
            for key in argv[4:]:
                print(rows[row].get(key, "").replace("\n", " "))
    elif cmd == "lp":
        print(len(read_lp(argv[2])))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for f in FAILS:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
