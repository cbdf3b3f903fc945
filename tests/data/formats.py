"""Independent readers of the formats dlgauge writes, from the specs alone
(docs: ../shared/FORMATS.md, dmlc-core recordio.h, LMDB's mdb.c page layout,
caffe.proto), with no third-party modules: a second opinion on the writers
that does not share code with the project's own readers."""
import struct

REC_MAGIC = 0xCED7230A


# ---- MXNet / dmlc RecordIO ----------------------------------------------------
def rec_records(data):
    """Yields (offset of the first magic, payload) per logical record; parts
    (cflag 1, 2..., 3) are joined with the magic re-inserted, as dmlc's
    RecordIOReader does.  Raises ValueError on anything malformed."""
    pos, n = 0, len(data)
    while pos < n:
        start, parts = pos, []
        while True:
            if pos + 8 > n:
                raise ValueError("truncated header at byte %d" % pos)
            magic, lrec = struct.unpack_from("<II", data, pos)
            if magic != REC_MAGIC:
                raise ValueError("bad magic 0x%08x at byte %d" % (magic, pos))
            cflag, length = lrec >> 29, lrec & ((1 << 29) - 1)
            want = (0, 1) if not parts else (2, 3)
            if cflag not in want:
                raise ValueError("cflag %d at byte %d, expected one of %s" % (cflag, pos, want))
            body = data[pos + 8:pos + 8 + length]
            if len(body) != length:
                raise ValueError("record at byte %d runs past the end" % pos)
            parts.append(body)
            pos += 8 + length
            if cflag in (0, 3):
                pad = (4 - length % 4) % 4
                if data[pos:pos + pad] != b"\0" * pad:
                    raise ValueError("padding after byte %d is not %d zero bytes" % (pos, pad))
                pos += pad
                break
            if length % 4:
                raise ValueError("part at byte %d has unaligned length %d" % (start, length))
        yield start, struct.pack("<I", REC_MAGIC).join(parts), len(parts)


def rec_splits(data):
    """Total parts beyond the first, over all records (split records)."""
    return sum(k - 1 for _, _, k in rec_records(data))


def idx_entries(text):
    """.idx: 'key<TAB>offset<NEWLINE>' per record."""
    out = []
    for line in text.split("\n")[:-1] if text.endswith("\n") else [None]:
        if line is None:
            raise ValueError(".idx does not end with a newline")
        key, off = line.split("\t")
        out.append((key, int(off)))
    return out


def im2rec_unpack(payload):
    """(flag, label, id, id2, labels, image) of an im2rec record (IRHeader)."""
    flag, label, id1, id2 = struct.unpack_from("<IfQQ", payload, 0)
    labels = list(struct.unpack_from("<%df" % flag, payload, 24)) if flag else [label]
    return flag, label, id1, id2, labels, payload[24 + 4 * flag:]


# ---- protobuf wire format: caffe.Datum -----------------------------------------
def _varint(buf, pos):
    v = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def datum_parse(buf):
    """Datum fields by caffe.proto: channels 1, height 2, width 3 (varint),
    data 4 (bytes), label 5 (varint int32), float_data 6 (fixed32, packed or
    not), encoded 7 (bool)."""
    d = {"float_data": []}
    pos = 0
    while pos < len(buf):
        tag, pos = _varint(buf, pos)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            v, pos = _varint(buf, pos)
            names = {1: "channels", 2: "height", 3: "width", 5: "label", 7: "encoded"}
            if field not in names:
                raise ValueError("unknown varint field %d" % field)
            if field == 5 and v >= 1 << 63:  # negative int32: 10-byte varint
                v -= 1 << 64
            d[names[field]] = v
        elif wire == 2:
            n, pos = _varint(buf, pos)
            body = buf[pos:pos + n]
            pos += n
            if field == 4:
                d["data"] = body
            elif field == 6:
                d["float_data"] += struct.unpack("<%df" % (n // 4), body)
            else:
                raise ValueError("unknown bytes field %d" % field)
        elif wire == 5 and field == 6:
            d["float_data"].append(struct.unpack_from("<f", buf, pos)[0])
            pos += 4
        else:
            raise ValueError("field %d wire type %d is not in Datum" % (field, wire))
    return d


# ---- LMDB: read the main database's B+tree ------------------------------------
P_BRANCH, P_LEAF, P_OVERFLOW, P_META, P_LEAF2 = 0x01, 0x02, 0x04, 0x08, 0x20
F_BIGDATA, F_SUBDATA, F_DUPDATA = 0x01, 0x02, 0x04
PAGEHDR = 16  # pgno u64, pad u16, flags u16, lower u16, upper u16
MDB_MAGIC = 0xBEEFC0DE


def _meta(data, off):
    magic, version = struct.unpack_from("<II", data, off + PAGEHDR)
    if magic != MDB_MAGIC:
        raise ValueError("no LMDB meta page at byte %d" % off)
    psize = struct.unpack_from("<I", data, off + PAGEHDR + 24)[0]  # dbs[FREE].md_pad
    main = off + PAGEHDR + 24 + 48  # MDB_db: pad u32, flags u16, depth u16, 5 x u64
    flags, depth = struct.unpack_from("<HH", data, main + 4)
    entries, root = struct.unpack_from("<QQ", data, main + 32)
    txnid = struct.unpack_from("<Q", data, off + PAGEHDR + 24 + 96 + 8)[0]
    return {"psize": psize, "flags": flags, "depth": depth, "entries": entries,
            "root": root, "txnid": txnid}


def lmdb_items(data):
    """Yields (key, value) of the main DB of a data.mdb image, in key order;
    returns the meta too via lmdb_meta()."""
    m = lmdb_meta(data)
    ps = m["psize"]
    if m["root"] == 0xFFFFFFFFFFFFFFFF:  # P_INVALID: empty DB
        return

    def walk(pgno):
        base = pgno * ps
        _, _, pflags, lower, _ = struct.unpack_from("<QHHHH", data, base)
        nkeys = (lower - PAGEHDR) >> 1
        for i in range(nkeys):
            node = base + struct.unpack_from("<H", data, base + PAGEHDR + 2 * i)[0]
            lo, hi, nflags, ksize = struct.unpack_from("<HHHH", data, node)
            key = data[node + 8:node + 8 + ksize]
            if pflags & P_BRANCH:
                yield from walk(lo | hi << 16 | nflags << 32)
            elif pflags & P_LEAF:
                dsize = lo | hi << 16
                if nflags & (F_SUBDATA | F_DUPDATA):
                    raise ValueError("unexpected sub-database or duplicate data")
                dpos = node + 8 + ksize
                if nflags & F_BIGDATA:
                    opg = struct.unpack_from("<Q", data, dpos)[0]
                    start = opg * ps + PAGEHDR
                    yield key, data[start:start + dsize]
                else:
                    yield key, data[dpos:dpos + dsize]
            else:
                raise ValueError("page %d has flags 0x%x" % (pgno, pflags))

    yield from walk(m["root"])


def lmdb_meta(data):
    """The newer of the two meta pages (page 0 at byte 0, page 1 at psize)."""
    m0 = _meta(data, 0)
    m1 = _meta(data, m0["psize"])
    return m0 if m0["txnid"] >= m1["txnid"] else m1
