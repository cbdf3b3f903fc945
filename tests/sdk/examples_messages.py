#!/usr/bin/env python3
"""The examples' messages do not start with their own plugin's name: the
host already puts it in front of every h->error() and h->log() line
(`dlgauge: x.ini:4: [job a] tinycnn: ...`), so a message that names it
again printed `tinycnn: tinycnn: out of memory` (docs/plugins.md, Ops).

usage: examples_messages.py SOURCE_DIR"""
import glob
import os
import re
import sys

CALL = re.compile(r"(?:->error|->log)\(\s*[^,]+,\s*[^,]+,\s*\"((?:[^\"\\]|\\.)*)\"")
NAME = re.compile(r"DLG_KIND_[A-Z]+,\s*\"([^\"]+)\"")


def main():
    src = sys.argv[1]
    files = sorted(glob.glob(os.path.join(src, "examples", "*", "*.c")))
    probs, calls = [], 0
    for path in files:
        text = open(path, encoding="utf-8").read()
        names = set(NAME.findall(text))
        for m in CALL.finditer(text):
            calls += 1
            fmt = m.group(1)
            for name in names:
                if fmt.startswith(name + ":") or fmt.startswith(name + " "):
                    line = text.count("\n", 0, m.start()) + 1
                    probs.append(f"{os.path.relpath(path, src)}:{line}: \"{fmt}\" starts with '{name}', "
                                 "which the host already puts in front")
    if not files or not calls:
        probs.append(f"no example messages found under {src}/examples")
    for p in probs:
        print("FAIL: " + p)
    if not probs:
        print(f"ok: {calls} messages in {len(files)} examples, none starts with its plugin's name")
    return 1 if probs else 0


if __name__ == "__main__":
    sys.exit(main())
