#!/usr/bin/env python3
"""check_docs.py DLGAUGE SOURCE_DIR: what the user-facing docs show still runs.

For README.md and every docs/*.md:
  - every ```ini block with a [job] or [sink] section passes
    `dlgauge run FILE --dry-run` (a job running noop is added where the
    block has none); a [catalog] block is read by `dlgauge report`;
  - every `dlgauge help WORD...` (lowercase words) exits 0;
  - every --option after `dlgauge [GLOBAL OPTIONS] COMMAND` (in inline
    code or a shell block) is one that command's usage names;
  - every row of a sink's option table in docs/sinks.md names an option
    of that sink with the default the code has;
  - every `REP_*` threshold a doc names is a constant of core/report's
    headers, with the value the doc puts beside it;
  - every dlg_*/DLG_* name docs/plugins.md uses is in a header (the SDK's,
    core's, a built-in plugin's) or cmake/, and every string in a C block
    of its example section is in examples/hello-workload/checksum.c;
  - each row of README.md's command table names every --option of
    `dlgauge help COMMAND`, or says "every option in [DOC](DOC)" of a DOC
    that names them all;
  - README.md's quick-start paragraph gives the rate the quick start's
    emulated GPU needs, from conf/quickstart.ini, and scripts/quickstart.sh's
    recommendation heading, like README, names the best measured rate.
For the same files: each relative link, and each `path` in
inline code under a top-level folder of the repository, exists (a path
with a capitalised placeholder such as conf/instances/X.ini is skipped).
Prints one line per problem (FILE:LINE: ...) and exits 1 if there is any.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile


# README.md and every page (the generated config.md and metrics.md too: their
# commands must run like any other's).
def docs(src):
    return ["README.md"] + sorted(os.path.relpath(p, src) for p in glob.glob(os.path.join(src, "docs/*.md")))


GLOBAL_WITH_ARG = {"--plugin-dir"}
NOOP_JOB = "\n[job docs-check]\nworkload = noop\niterations = 1\n"


def run(dlg, args, cwd, env=None):
    try:
        p = subprocess.run([dlg] + args, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:  # one problem line, not a traceback that hides the others
        return 124, f"dlgauge {' '.join(args)}: no answer in 60 s"
    return p.returncode, p.stdout + p.stderr


def last_line(out):
    """The line that says why a command failed; a crash may print none."""
    lines = out.strip().splitlines()
    return lines[-1] if lines else "(no output)"


def blocks(text):
    """(first line number, language, body) of each fenced block."""
    out, lang, start, body = [], None, 0, []
    for n, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s*```(\w*)\s*$", line)
        if m and lang is None:
            lang, start, body = m.group(1), n + 1, []
        elif m:
            out.append((start, lang, "\n".join(body) + "\n"))
            lang = None
        elif lang is not None:
            body.append(line)
    return out


def inline_code(text):
    """(line number, span) of each `inline code` span (spans may wrap)."""
    for m in re.finditer(r"(?<!`)`([^`]+)`(?!`)", text):
        yield text.count("\n", 0, m.start()) + 1, " ".join(m.group(1).split())


def command_lines(text):
    """(line, text) of each place that shows a dlgauge command line."""
    for n, span in inline_code(text):
        yield n, span
    for start, lang, body in blocks(text):
        if lang in ("sh", "bash", ""):
            for i, line in enumerate(body.splitlines()):
                yield start + i, line.split("#")[0]


def usage(dlg, cwd, cmd, cache):
    if cmd not in cache:
        cache[cmd] = run(dlg, ["help", cmd] if cmd else ["--help"], cwd)[1]
    return cache[cmd]


def check_ini(dlg, tmp, doc, start, body, probs, counts):
    path = os.path.join(tmp, "snippet.ini")
    env = dict(os.environ, INFLUX_TOKEN="docs-check")
    if re.search(r"^\[catalog\]", body, re.M):
        with open(path, "w") as f:
            f.write(body)
        rc, out = run(dlg, ["report", "results/base.csv", "--catalog", path], tmp, env)
    elif re.search(r"^\[(job|sink)\b", body, re.M):
        with open(path, "w") as f:
            f.write(body if re.search(r"^\[job\b", body, re.M) else body + NOOP_JOB)
        rc, out = run(dlg, ["run", path, "--dry-run"], tmp, env)
    else:
        return
    counts["ini"] += 1
    if rc != 0:  # name the doc's line, not the snippet file's
        why = re.sub(r"\S*snippet\.ini:(\d+)", lambda m: f"{doc}:{start + int(m.group(1)) - 1}",
                     last_line(out))
        probs.append(f"{doc}:{start}: this ini block does not parse (exit {rc}): {why}")


def check_commands(dlg, tmp, doc, text, probs, cache, counts):
    for n, line in command_lines(text):
        for m in re.finditer(r"(?:^|[\s(/])dlgauge((?:\s+\S+)+)", line):
            words, own_plugins = m.group(1).split(), False
            while words and words[0].startswith("-"):  # global options
                flag = words.pop(0).split("=")[0]
                if flag not in usage(dlg, tmp, "", cache):
                    probs.append(f"{doc}:{n}: `dlgauge {flag}` is no option of dlgauge (dlgauge --help)")
                if flag in GLOBAL_WITH_ARG and words:
                    words.pop(0)
                own_plugins |= flag == "--plugin-dir"
            if not words or not re.fullmatch(r"[a-z]+", words[0]):
                continue
            cmd, rest = words[0], words[1:]
            counts["commands"] += 1
            if cmd == "help":
                if own_plugins:  # the doc's own plugin, built elsewhere
                    continue
                names = [w for w in rest if not w.startswith("-")]
                if names and all(re.fullmatch(r"[a-z][a-z0-9_-]*", w) for w in names):
                    rc, out = run(dlg, ["help"] + names, tmp)
                    if rc != 0:
                        probs.append(f"{doc}:{n}: `dlgauge help {' '.join(names)}` exits {rc}: "
                                     f"{last_line(out)}")
                continue
            text_usage = usage(dlg, tmp, cmd, cache)
            if not text_usage.startswith("usage: dlgauge " + cmd):
                continue  # a word after "dlgauge" in prose, not a command
            for w in rest:
                flag = re.match(r"\[?(--[a-z][a-z-]*)", w)
                known = flag and (flag.group(1) == "--help" or
                                  re.search(re.escape(flag.group(1)) + r"\b", text_usage))
                if flag and not known:
                    probs.append(f"{doc}:{n}: `dlgauge {cmd} {flag.group(1)}` is not in `dlgauge help {cmd}`")


def sink_tables(text):
    """(line, sink, key, default) of each option row under a `## SINK` heading."""
    sink = None
    for n, line in enumerate(text.splitlines(), 1):
        h = re.match(r"^## (\w+)\s*$", line)
        if h:
            sink = h.group(1)
            continue
        row = re.match(r"^\| `(\w+)` \|[^|]*\|\s*([^|]*?)\s*\|", line)
        if sink and row:
            yield n, sink, row.group(1), row.group(2).strip().strip("`")


def code_defaults(dlg, tmp, sink, cache):
    key = "md:" + sink
    if key not in cache:
        rc, out = run(dlg, ["help", "--markdown", sink], tmp)
        rows = re.findall(r"^\| `(\w+)` \| \w+ \| ([^|]*) \|", out, re.M) if rc == 0 else []
        cache[key] = {k: d.strip() for k, d in rows}
    return cache[key]


def check_sink_tables(dlg, tmp, doc, text, probs, cache, counts):
    for n, sink, opt, default in sink_tables(text):
        have = code_defaults(dlg, tmp, sink, cache)
        counts["options"] += 1
        if opt not in have:
            probs.append(f"{doc}:{n}: sink {sink} has no option `{opt}` (dlgauge help {sink})")
            continue
        want = "(unset)" if default == "" else default
        if want != have[opt]:
            probs.append(f"{doc}:{n}: sink {sink} option `{opt}`: the doc says default {default or '(none)'}, "
                         f"the code {have[opt]}")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def check_plugin_guide(src, doc, text, probs, counts):
    pats = ["include/dlgauge/*.h", "cmake/*.cmake*", "core/**/*.h", "plugins/**/*.h"]
    sdk = " ".join(read(p) for pat in pats for p in glob.glob(os.path.join(src, pat), recursive=True))
    known = set(re.findall(r"\b(?:dlg|DLG)_\w+", sdk))
    for m in re.finditer(r"\b(?:dlg|DLG)_\w+", text):
        counts["names"] += 1
        if m.group(0) not in known:
            line = text.count("\n", 0, m.start()) + 1
            probs.append(f"{doc}:{line}: `{m.group(0)}` is in no header of dlgauge")
    example = read(os.path.join(src, "examples/hello-workload/checksum.c"))
    strings = set(re.findall(r'"((?:[^"\\]|\\.)*)"', example))
    a = text.index("## The smallest complete example")
    section = text[a:text.index("\n## ", a + 1)]
    line0 = text.count("\n", 0, a)
    for start, lang, body in blocks(section):
        for lit in re.findall(r'"((?:[^"\\]|\\.)*)"', body) if lang == "c" else []:
            if lit not in strings:
                probs.append(f"{doc}:{line0 + start}: \"{lit}\" is not in examples/hello-workload/checksum.c")


def report_constants(src):
    """REP_* names core/report's headers define, with their values."""
    consts = {}
    for path in glob.glob(os.path.join(src, "core/report/*.h")):
        for m in re.finditer(r"^#define (REP_\w+)\s+([-\d.]+)", read(path), re.M):
            consts[m.group(1)] = float(m.group(2))
        for body in re.findall(r"enum\s*\w*\s*\{([^}]*)\}", read(path)):
            consts.update((n, None) for n in re.findall(r"\b(REP_\w+)", body))
    return consts


def check_report_constants(src, doc, text, probs, counts):
    """A threshold a doc names (`REP_AU_OK`) is one the report has, and the
    figure beside it (`REP_CPU_STEAL` 0.10, 0.90 (`REP_AU_OK`) is its value:
    a renamed or retuned threshold leaves no stale explanation."""
    consts = report_constants(src)
    for m in re.finditer(r"(?:([\d.]+)\s+\(\s*)?`(REP_\w+)`(?:\s+([\d.]+))?", text):
        counts["names"] += 1
        line, name = text.count("\n", 0, m.start()) + 1, m.group(2)
        if name not in consts:
            probs.append(f"{doc}:{line}: `{name}` is no constant of core/report (its headers)")
            continue
        for fig in (m.group(1), m.group(3)):
            if fig and consts[name] is not None and abs(float(fig.rstrip(".")) - consts[name]) > 1e-9:
                probs.append(f"{doc}:{line}: `{name}` is {consts[name]:g} in core/report, the doc says {fig}")


def command_options(dlg, tmp, cmd, cache):
    """The --options `dlgauge help CMD` names (--help aside)."""
    return set(re.findall(r"--[a-z][a-z-]*", usage(dlg, tmp, cmd, cache))) - {"--help"}


def check_command_table(dlg, tmp, src, text, probs, cache, counts):
    """README's table is a user's summary of each command: complete, or
    pointing at the page that is (an option added later, as compare's
    --allow-missing, otherwise goes unseen)."""
    rows = {}  # command -> (first line, options shown, its rows' text); mkdata has a row per form
    for n, line in enumerate(text.splitlines(), 1):
        row = re.match(r"^\| `dlgauge ([a-z]+)( [^`]*)?` \|(.*)\|\s*$", line)
        if row:
            first, shown, what = rows.get(row.group(1), (n, set(), ""))
            # options in the usage cell, and a form the text shows whole (`dlgauge --version`)
            opts = re.findall(r"--[a-z][a-z-]*", row.group(2) or "")
            opts += re.findall(r"`dlgauge (--[a-z][a-z-]*)`", row.group(3))
            rows[row.group(1)] = (first, shown | set(opts), what + row.group(3))
            counts["rows"] += 1
    for cmd, (n, shown, what) in rows.items():
        missing = command_options(dlg, tmp, cmd, cache) - shown
        ref = re.search(r"every option in \[[^]]*\]\(([^)]+)\)", what)
        if ref and missing:
            doc = read(os.path.join(src, ref.group(1)))
            missing = {o for o in missing if not re.search(re.escape(o) + r"\b", doc)}
            where = ref.group(1)
        else:
            where = "this row (or say: every option in [DOC](DOC))"
        if missing:
            probs.append(f"README.md:{n}: `dlgauge {cmd}` options missing from {where}: "
                         f"{' '.join(sorted(missing))}")


def check_quickstart_rate(src, text, probs):
    """README says what rate the quick start's emulated GPU needs, so that an
    AU below 1 is read as "2 cores cannot feed it", not as a broken run; the
    figures must follow conf/quickstart.ini's input-pipeline job."""
    ini = read(os.path.join(src, "conf/quickstart.ini"))
    job = re.search(r"^\[job input-pipeline\]\n(.*?)(?=^\[|\Z)", ini, re.M | re.S)
    batch = job and re.search(r"^batch\s*=\s*(\d+)", job.group(1), re.M)
    ms = job and re.search(r"^compute\s*=\s*([\d.]+)ms", job.group(1), re.M)
    if not (batch and ms):
        probs.append("conf/quickstart.ini: no [job input-pipeline] with batch = N and compute = Nms "
                     "(README.md's quick start quotes them; update this check with it)")
        return
    batch, ms = int(batch.group(1)), float(ms.group(1))
    want = f"takes {ms:g} ms per batch of {batch} needs {batch * 1000 / ms:g} images/s"
    if want not in " ".join(text.split()):
        probs.append(f"README.md: the quick start's paragraph should say a GPU that {want} "
                     f"(conf/quickstart.ini's input-pipeline job)")
    # the script's closing heading names the instance as README and the
    # report do: one reaching the best measured rate, fed GPU or not
    script = read(os.path.join(src, "scripts/quickstart.sh"))
    if "best measured rate" not in text or not re.search(r'^echo "== .*best measured rate', script, re.M):
        probs.append("scripts/quickstart.sh: its recommendation's heading should say, as README.md does, "
                     "that the instance reaches the input pipeline's best measured rate (not that it keeps "
                     "the GPU fed: the report says when nothing measured does)")


TOP_DIRS = ("core", "plugins", "sinks", "tests", "scripts", "conf", "examples", "include", "cmake",
            "docs", ".ci")


def check_paths(src, doc, text, probs, counts):
    """Links and repository paths a doc gives still lead to a file."""
    base = os.path.dirname(os.path.join(src, doc))
    for m in re.finditer(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+:", m.group(1)):
            continue  # http:, mailto:
        counts["paths"] += 1
        if not os.path.exists(os.path.join(base, m.group(1))):
            probs.append(f"{doc}:{text.count(chr(10), 0, m.start()) + 1}: link to {m.group(1)}: no such file")
    for n, span in inline_code(text):
        if " " in span or not span.split("/")[0] in TOP_DIRS or "/" not in span:
            continue
        counts["paths"] += 1
        if glob.glob(os.path.join(src, span.rstrip("/"))):
            continue
        if re.search(r"(^|[/._-])[A-Z]+([/._-]|$)|<|\{", span):
            continue  # a placeholder: conf/instances/X.ini, tests/DIR/<name>
        probs.append(f"{doc}:{n}: `{span}`: no such file or folder in the repository")


def main():
    dlg, src = os.path.abspath(sys.argv[1]), sys.argv[2]
    probs, cache = [], {}
    counts = {"ini": 0, "commands": 0, "options": 0, "names": 0, "rows": 0, "paths": 0}
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "base.ini")
        with open(base, "w") as f:
            f.write("[sink csv]\npath = results/base.csv\n" + NOOP_JOB)
        rc, out = run(dlg, ["run", base], tmp)
        if rc != 0:
            print("FAIL: cannot run a noop job:", out)
            return 1
        for doc in docs(src):
            text = read(os.path.join(src, doc))
            for start, lang, body in blocks(text):
                if lang == "ini":
                    check_ini(dlg, tmp, doc, start, body, probs, counts)
            check_commands(dlg, tmp, doc, text, probs, cache, counts)
            check_report_constants(src, doc, text, probs, counts)
            if doc == "docs/plugins.md":
                check_plugin_guide(src, doc, text, probs, counts)
            if doc == "docs/sinks.md":
                check_sink_tables(dlg, tmp, doc, text, probs, cache, counts)
            if doc == "README.md":
                check_command_table(dlg, tmp, src, text, probs, cache, counts)
                check_quickstart_rate(src, text, probs)
        for doc in docs(src):
            check_paths(src, doc, read(os.path.join(src, doc)), probs, counts)
    for p in probs:
        print("FAIL:", p)
    if not probs:
        print("ok: the docs' {ini} ini blocks, {commands} commands, {rows} command rows, {options} sink "
              "options, {names} dlg_ names and {paths} paths match dlgauge".format(**counts))
    return 1 if probs else 0


if __name__ == "__main__":
    sys.exit(main())
