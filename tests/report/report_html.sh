# The HTML report is well-formed and renders: xmllint --html reports no
# error, the file is also well-formed XML, every chart (SVG in a data: URI)
# is well-formed SVG, nothing is fetched from elsewhere (no scripts, no
# links), and headless Chromium renders it to a PNG with real content.
#   bash report_html.sh DLGAUGE WORK_DIR      (77 = skipped: no chromium)
set -u
DLG=$(realpath "$1")
WORK=$(realpath -m "$2")
SRC=${DLG_SOURCE_DIR:?}
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK" || exit 1
FAILS=0
fail() { echo "FAIL: $*" >&2; FAILS=$((FAILS + 1)); }

"$DLG" report "$SRC/tests/report/fixtures/known.csv" --catalog "$SRC/tests/report/fixtures/catalog.ini" \
    --html report.html --markdown report.md >report.txt 2>report.err || { echo "report failed: $(cat report.err)" >&2; exit 1; }
[ -s report.html ] || fail "no HTML written"
xmllint --html --noout report.html >html.log 2>&1 || fail "xmllint --html exit $?"
[ -s html.log ] && fail "xmllint --html complains: $(head -5 html.log)"
xmllint --noout report.html >xml.log 2>&1 || fail "not well-formed XML: $(head -5 xml.log)"
grep -qiE '<script|<link|<iframe|<object|@import|url\(' report.html && fail "external or scripted content in the HTML"
grep -oE '(src|href)="[^"]*"' report.html | grep -v '^src="data:image/svg+xml;base64,' && fail "a reference that is not an inline chart"
python3 - <<'PY' || fail "chart check failed"
import base64, re, subprocess, sys
html = open("report.html").read()
charts = re.findall(r'src="data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)"', html)
# a curve per swept axis + 1 stack per group with axes... train: cpus and
# memory + 1, infer: cpus + 1 (its memory has one value: no curve), cost: 1
if len(charts) != 6:
    sys.exit(f"{len(charts)} charts, expected 6")
for i, c in enumerate(charts):
    svg = base64.b64decode(c)
    open(f"chart{i}.svg", "wb").write(svg)
    r = subprocess.run(["xmllint", "--noout", f"chart{i}.svg"], capture_output=True, text=True)
    if r.returncode or r.stderr:
        sys.exit(f"chart{i}.svg: {r.stderr}")
    if b"<circle" not in svg and b"<rect" not in svg:
        sys.exit(f"chart{i}.svg has no marks")
# the knee is marked on the cpus curve of the train group and the target line drawn
first = base64.b64decode(charts[0]).decode()
if "knee" not in first or "95% of best" not in first:
    sys.exit("no knee / target marks in the first curve")
PY

# the HTML's tables say what the Markdown's say, J/item per cell included
# (known.csv: 0.5 J/item in every measured cell; the oom one has none)
python3 - <<'PY' || fail "cells tables: HTML != Markdown, or J/item missing"
import html, re, sys
page = open("report.html").read()
hts = [[[html.unescape(re.sub(r"<[^>]*>", "", c)) for c in re.findall(r"<t[hd][^>]*>.*?</t[hd]>", tr)]
        for tr in re.findall(r"<tr>.*?</tr>", t, re.S)] for t in re.findall(r"<table>.*?</table>", page, re.S)]
mds, cur = [], None
for line in open("report.md").read().splitlines():
    if not line.startswith("|"):
        cur = None
        continue
    if cur is None:
        cur = []
        mds.append(cur)
    if not re.fullmatch(r"\|(-+:?\|)+", line):
        cur.append([c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]])
if hts != mds:
    sys.exit(f"HTML tables {hts} != Markdown tables {mds}")
groups = [t for t in hts if "bottleneck" in t[0]]
if len(groups) != 2:
    sys.exit(f"{len(groups)} cells tables, expected 2")
for t in groups:
    j = t[0].index("J/item") if "J/item" in t[0] else sys.exit(f"no J/item column: {t[0]}")
    if j != t[0].index("n") + 1:
        sys.exit(f"J/item is not beside throughput: {t[0]}")
    for row in t[1:]:
        want = "-" if row[t[0].index("throughput")] == "oom" else "0.5"
        if row[j] != want:
            sys.exit(f"J/item {row[j]!r}, expected {want!r}: {row}")
PY

# ---- render in headless Chromium ---------------------------------------------
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ]; then
    echo "SKIP: no chromium" >&2
    [ "$FAILS" -gt 0 ] && exit 1
    exit 77
fi
export HOME=$WORK
timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
    --window-size=1200,1600 --screenshot="$WORK/shot.png" "file://$WORK/report.html" >chrome.log 2>&1
if [ ! -s shot.png ]; then
    if [ "$FAILS" -gt 0 ]; then exit 1; fi
    echo "SKIP: chromium could not start: $(tail -3 chrome.log)" >&2
    exit 77
fi
python3 - shot.png <<'PY' || fail "screenshot is blank or broken"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w, h, ct, bd = 8, b"", 0, 0, 0, 0
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, bd, ct = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
assert bd == 8 and ct in (2, 6), f"unexpected PNG format {bd}/{ct}"
bpp = 3 if ct == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
colours = {}
coloured = 0   # pixels that are neither white-ish nor grey: chart marks
off = 0
for y in range(h):
    f = raw[off]
    line = bytearray(raw[off + 1:off + 1 + stride])
    off += 1 + stride
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + ((a + b) >> 1)) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = line
    if y % 2:
        continue
    for x in range(0, w, 2):
        px = tuple(line[x * bpp:x * bpp + 3])
        colours[px] = colours.get(px, 0) + 1
        if max(px) - min(px) > 60:
            coloured += 1
print(f"{w}x{h}, {len(colours)} colours sampled, {coloured} saturated samples", file=sys.stderr)
assert w >= 800 and h >= 800, "too small"
assert len(colours) > 50, "nearly one colour: nothing rendered"
assert coloured > 500, "no coloured chart marks rendered"
PY

if [ "$FAILS" -gt 0 ]; then
    echo "$FAILS check(s) failed (outputs kept in $WORK)" >&2
    exit 1
fi
echo "all checks passed"
