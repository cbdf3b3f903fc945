"""Checks dlgauge's generated and converted datasets with the independent
readers of formats.py (python3, no third-party modules).  Each command
exits 1 with one line saying what is wrong.
  check_formats.py images DIR SPLIT N CLASSES   mkdata images output
  check_formats.py text FILE WORDS VOCAB        mkdata text output
  check_formats.py rec REC LST ROOT             .rec/.idx against an im2rec .lst
  check_formats.py lmdb DIR LIST ROOT [DEPTH]   LMDB against a convert_imageset list
  check_formats.py magic SRC DST                SRC's JPEG with the RecordIO magic
                                                at 4-byte-aligned offsets (split records)"""
import os
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import formats as F  # noqa: E402


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def jpeg_size(data, name):
    """(width, height) from the SOF marker; checks SOI and EOI."""
    if data[:2] != b"\xff\xd8" or data[-2:] != b"\xff\xd9":
        fail("%s: not a whole JPEG (SOI/EOI)" % name)
    pos = 2
    while pos + 4 <= len(data):
        marker, length = data[pos + 1], struct.unpack_from(">H", data, pos + 2)[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack_from(">HH", data, pos + 5)
            return w, h
        pos += 2 + length
    fail("%s: no SOF marker" % name)


def images(root, split, n, classes):
    n, classes = int(n), int(classes)
    txt = open(os.path.join(root, split + ".txt")).read().splitlines()
    lst = open(os.path.join(root, split + ".lst")).read().splitlines()
    tree = os.path.join(root, split)
    # the marker that makes the tree mkdata's to replace, saying what it made
    marker = os.path.join(tree, ".dlgauge-mkdata")
    want = "dlgauge mkdata images: classes %d, images %d\n" % (classes, n)
    if not os.path.isfile(marker) or open(marker).read() != want:
        fail("%s: missing, or not '%s'" % (marker, want.strip()))
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(tree) for f in fs if os.path.join(d, f) != marker)
    if not len(txt) == len(lst) == len(files) == n:
        fail("%d list lines, %d .lst lines, %d files; expected %d" % (len(txt), len(lst), len(files), n))
    if len(os.listdir(tree)) != classes + 1:
        fail("expected %d class folders and the marker" % classes)
    for i, (t, l) in enumerate(zip(txt, lst)):
        rel, label = t.rsplit(" ", 1)
        if l != "%d\t%s\t%s" % (i, label, rel) or int(label) != i % classes:
            fail("line %d: .txt '%s' and .lst '%s' disagree" % (i + 1, t, l))
        w, h = jpeg_size(open(os.path.join(root, rel), "rb").read(), rel)
        if not (64 <= w <= 1200 and 64 <= h <= 1200):
            fail("%s: %dx%d is outside 64..1200" % (rel, w, h))


def text(path, words, vocab):
    words, vocab = int(words), int(vocab)
    lines = open(path).read().split("\n")
    if lines[-1] != "":
        fail("%s does not end with a newline" % path)
    tokens = [t for line in lines for t in line.split()]
    # whole sentences of at most 120 tokens: at least WORDS, less than WORDS + 120
    if not words <= len(tokens) < words + 120:
        fail("%s: %d tokens for --words %d" % (path, len(tokens), words))
    # --vocab counts <eos>, which the file has no token for (line ends)
    if len(set(tokens)) > vocab - 1:
        fail("%s: %d distinct tokens + <eos> for --vocab %d" % (path, len(set(tokens)), vocab))


def rec(rec_path, lst_path, root):
    data = open(rec_path, "rb").read()
    recs = list(F.rec_records(data))
    idx = F.idx_entries(open(os.path.splitext(rec_path)[0] + ".idx").read())
    lst = [l.split("\t") for l in open(lst_path).read().splitlines()]
    if not len(recs) == len(idx) == len(lst):
        fail("%d records, %d .idx lines, %d .lst lines" % (len(recs), len(idx), len(lst)))
    for (off, payload, _), (key, ioff), fields in zip(recs, idx, lst):
        flag, label, id1, _, labels, img = F.im2rec_unpack(payload)
        want = [float(x) for x in fields[1:-1]]
        if (key, ioff, id1) != (fields[0], off, int(fields[0])):
            fail("record at %d: .idx says %s at %d, header id %d" % (off, key, ioff, id1))
        if labels != want or flag != (len(want) if len(want) > 1 else 0):
            fail("record %s: flag %d labels %s, expected %s" % (key, flag, labels, want))
        if img != open(os.path.join(root, fields[-1]), "rb").read():
            fail("record %s: image bytes differ from %s" % (key, fields[-1]))
    print("%d records, %d split parts" % (len(recs), F.rec_splits(data)))


def lmdb(db, list_path, root, depth=1):
    data = open(os.path.join(db, "data.mdb"), "rb").read()
    meta = F.lmdb_meta(data)
    items = list(F.lmdb_items(data))
    lines = [l.rsplit(" ", 1) for l in open(list_path).read().splitlines()]
    if not meta["entries"] == len(items) == len(lines):
        fail("meta says %d entries, tree has %d, list %d" % (meta["entries"], len(items), len(lines)))
    if meta["depth"] < int(depth):
        fail("B+tree depth %d, expected at least %s" % (meta["depth"], depth))
    for n, ((key, val), (rel, label)) in enumerate(zip(items, lines)):
        if key != b"%08d_%s" % (n, rel.encode()):
            fail("entry %d: key %r" % (n, key))
        d = F.datum_parse(val)
        if d.get("encoded") != 1 or d.get("label") != int(label):
            fail("%r: encoded %s label %s, expected 1 and %s" % (key, d.get("encoded"), d.get("label"), label))
        if d.get("data") != open(os.path.join(root, rel), "rb").read():
            fail("%r: data differs from the file" % key)
    print("%d entries, depth %d" % (len(items), meta["depth"]))


def magic(src, dst):
    j = open(src, "rb").read()
    m = struct.pack("<I", F.REC_MAGIC)
    body = b"xx" + m + b"yyyy" + m + m + b"z"  # file offsets 8, 16, 20 after SOI + COM header
    open(dst, "wb").write(j[:2] + b"\xff\xfe" + struct.pack(">H", len(body) + 2) + body + j[2:])


cmds = {"images": images, "text": text, "rec": rec, "lmdb": lmdb, "magic": magic}
if len(sys.argv) < 2 or sys.argv[1] not in cmds:
    fail(__doc__)
cmds[sys.argv[1]](*sys.argv[2:])
