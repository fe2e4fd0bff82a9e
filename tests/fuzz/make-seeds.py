#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Writes the seed corpus of one fuzz target into OUT_DIR.

    make-seeds.py TARGET FSCK_CORPUS_DIR INTEROP_DIR OUT_DIR

check and replay get every image of the fsck corpus (tests/fsck/f_*/image.zst)
and of the interop fixtures (INTEROP_DIR/*/*.img.zst, skipped when absent),
cut to the superblock and the written part of the log and put in the compact
image format of README.md.  create, options and config get seeds made here.
"""
import glob
import os
import re
import struct
import subprocess
import sys
import zlib

LOG_OFFSET = 0x200000
SB_SIZE = 200
HDR_SIZE = 48
ENTRY_SIZE = 544
FIX_SB, FIX_LOG, FIX_ENTRY_CRC, FIX_ENTRY_SEQ = 1, 2, 4, 8
MiB = 1 << 20
GiB = 1 << 30


def medium_size(path):
    out = subprocess.run(["zstd", "-lv", path], capture_output=True, text=True).stdout
    m = re.search(r"Decompressed Size:.*\((\d+) B\)", out)
    return int(m.group(1)) if m else None


def read_prefix(path, n):
    """The first n bytes of a zstd image, without writing out the (sparse) rest."""
    proc = subprocess.Popen(["zstd", "-dc", path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    data = proc.stdout.read(n)
    proc.stdout.close()
    proc.kill()
    proc.wait()
    return data


def compact(path):
    """(medium size, superblock, log header, [entries]) of one image."""
    head = read_prefix(path, LOG_OFFSET + HDR_SIZE)
    if len(head) < LOG_OFFSET + HDR_SIZE:
        return None
    sb = head[:SB_SIZE]
    hdr = head[LOG_OFFSET:LOG_OFFSET + HDR_SIZE]
    log_len = struct.unpack_from("<Q", sb, 24)[0]
    next_index = struct.unpack_from("<Q", hdr, 40)[0]
    slots = (min(log_len, 64 * MiB) - HDR_SIZE) // ENTRY_SIZE if log_len > HDR_SIZE else 0
    # The written entries, two past them (a torn tail lives there), and never the whole of a big log.
    n = min(next_index + 2, slots, 256)
    body = read_prefix(path, LOG_OFFSET + HDR_SIZE + n * ENTRY_SIZE)[LOG_OFFSET + HDR_SIZE:]
    entries = [body[k:k + ENTRY_SIZE] for k in range(0, len(body) - ENTRY_SIZE + 1, ENTRY_SIZE)]
    size = medium_size(path)
    if size is None:
        size = struct.unpack_from("<Q", sb, 112)[0]
    # Trailing zero entries add nothing but length.
    while entries and entries[-1] == bytes(ENTRY_SIZE):
        entries.pop()
    return size, sb, hdr, entries


def image_bytes(size, sb, hdr, entries, fix=0, mode=0):
    return struct.pack("<BBHIQ", fix, mode, 0, 0, size) + sb + hdr + b"".join(entries)


def with_next_index(hdr, next_index):
    return hdr[:32] + struct.pack("<QQ", next_index, next_index)


def step(op, flags=0, a=0, b=0, value=0):
    return struct.pack("<BBHIQ", op, flags, a, b, value)


def images(fsck_dir, interop_dir):
    paths = sorted(glob.glob(os.path.join(fsck_dir, "f_*", "image.zst")))
    if os.path.isdir(interop_dir):
        paths += sorted(glob.glob(os.path.join(interop_dir, "*", "*.img.zst")))
    for p in paths:
        c = compact(p)
        if c:
            yield os.path.basename(os.path.dirname(p)), c


def seeds_check(fsck_dir, interop_dir):
    for name, (size, sb, hdr, entries) in images(fsck_dir, interop_dir):
        yield name, image_bytes(size, sb, hdr, entries, mode=4)
        yield name + "-view", image_bytes(size, sb, hdr, entries, mode=1)


OP_SET_NEXT_INDEX, OP_GROW, OP_SET_NEXT_SEQNUM, OP_POKE_LOG, OP_POKE_SB, OP_COPY_ENTRY, \
    OP_REWIND, OP_SHRINK, OP_OWN_MKDIR, OP_OWN_CREATE = range(10)


def seeds_replay(fsck_dir, interop_dir):
    for name, (size, sb, hdr, entries) in images(fsck_dir, interop_dir):
        if size > 64 * GiB:
            continue
        nxt = struct.unpack_from("<Q", hdr, 40)[0]
        seq = struct.unpack_from("<Q", hdr, 32)[0]
        # Attach, then the log grows in three steps as another host appends.
        third = nxt // 3
        steps = [step(OP_SET_NEXT_INDEX, value=2 * third), step(OP_SET_NEXT_INDEX, flags=2, value=nxt),
                 step(OP_SET_NEXT_SEQNUM, value=seq)]
        yield name + "-grow", bytes([len(steps)]) + b"".join(steps) + \
            image_bytes(size, sb, with_next_index(hdr, third), entries)
        # The master, its own creates between foreign rewrites; then the log goes backwards.
        steps = [step(OP_OWN_MKDIR, flags=1, value=1), step(OP_OWN_CREATE, flags=1, a=2, value=5 * MiB),
                 step(OP_COPY_ENTRY, flags=1, a=0, b=1), step(OP_REWIND), step(OP_SHRINK, value=LOG_OFFSET)]
        yield name + "-master", bytes([len(steps)]) + b"".join(steps) + \
            image_bytes(size, sb, hdr, entries, mode=1)


def path_bytes(s):
    """A raw path (high bit of the length byte set: bytes taken as they are)."""
    return bytes([0x80 | len(s)]) + s.encode()


def file_bytes(path, size, mode=0o644, uid=0, gid=0, interleave=None):
    out = path_bytes(path) + bytes([0]) + struct.pack("<QIII", size, mode, uid, gid)
    if interleave:
        nbuckets, nstrips, chunk = interleave
        out += bytes([1, 0]) + struct.pack("<IIQ", nbuckets, nstrips, chunk)
    else:
        out += bytes([0])
    return out


def create_request(dev_sel, files, pre=b"", npre=0, kind=0):
    """dev_sel picks the device size (fuzz-create.c dev_sizes); kind 0x80 = a batch."""
    out = bytes([dev_sel, 1, npre]) + pre
    if len(files) > 1:
        out += bytes([kind | 0x80, len(files) - 1])
    else:
        out += bytes([kind])
    return out + b"".join(files)


def seeds_create(fsck_dir, interop_dir):
    pre = path_bytes("dir") + struct.pack("<H", 0) + bytes([1]) + \
        path_bytes("dir/old") + struct.pack("<H", 3) + bytes([0])
    yield "plain", create_request(4, [file_bytes("a", 4096)])
    # Issue 11 section 2: a size near 2^64, an interleave whose nstrips*chunk overflows.
    yield "size-2^64", create_request(4, [file_bytes("huge", (1 << 64) - 1)])
    yield "size-2^64-in-dir", create_request(4, [file_bytes("dir/huge", (1 << 64) - 4096)], pre, 2)
    yield "interleave-overflow", create_request(5, [file_bytes("s", (1 << 63), interleave=(8, 8, 1 << 61))])
    yield "interleave", create_request(5, [file_bytes("s", 40 * MiB, interleave=(8, 4, 2 * MiB))])
    # [bad, good1, good2]: all or nothing.
    yield "batch-bad-first", create_request(4, [file_bytes("no/parent", 4096), file_bytes("g1", 4096),
                                                file_bytes("g2", 4096)])
    yield "batch-huge-first", create_request(4, [file_bytes("huge", (1 << 64) - 1), file_bytes("g1", 4096),
                                                 file_bytes("g2", 4096)])
    yield "batch-dup", create_request(4, [file_bytes("x", 4096), file_bytes("x", 4096)])
    yield "batch-nospace", create_request(0, [file_bytes("b1", 20 * MiB), file_bytes("b2", 40 * MiB)])
    yield "mkdir-p", create_request(4, [path_bytes("m/n/o") + bytes([0]) + struct.pack("<QIII", 1, 0o755, 0, 0) +
                                        bytes([0])], pre, 2, kind=2)


def seeds_options(fsck_dir, interop_dir):
    # allowed set, top byte (1: a{sv}), then per entry: key selector, type selector, value
    def entry(key, typ, value):
        return bytes([key, typ]) + struct.pack("<Q", value)
    yield "create-ok", bytes([0, 1]) + entry(0, 0, 1000) + entry(1, 0, 1000) + entry(4, 1, 2 * MiB)
    yield "mkdir-parents", bytes([2, 1]) + entry(5, 2, 1)
    yield "wrong-type", bytes([0, 1]) + entry(0, 1, 7)
    yield "unknown-key", bytes([1, 1]) + entry(6, 2, 1)
    yield "empty-key", bytes([0, 1]) + entry(7, 0, 0)
    yield "not-asv", bytes([0, 0x30]) + struct.pack("<Q", 5)


def seeds_config(fsck_dir, interop_dir):
    yield "full", b"""# a full configuration
[manager]
device = /dev/dax0.0
device = /dev/dax1.0
mount-root = /run/famfs
poll-interval = 100
torn-tail-grace = 2000
system-uuid-file = /opt/famfs/system_uuid
polkit = yes
udev = yes
udev-source = auto
automount = no
backend = auto
kernel-module = famfs

[filesystem 3f0c7a51-9e24-4b8d-a116-52c0de700001]
automount = yes
mount-point = /mnt/shared
backend = view
"""
    yield "bad-section", b"[nope]\nx = 1\n"
    yield "long-line", b"device = /" + b"a" * 5000 + b"\n"
    yield "bad-value", b"[manager]\npoll-interval = 0x10\n"


def main():
    target, fsck_dir, interop_dir, out_dir = sys.argv[1:5]
    gen = {"check": seeds_check, "replay": seeds_replay, "create": seeds_create,
           "options": seeds_options, "config": seeds_config}[target]
    os.makedirs(out_dir, exist_ok=True)
    for name, data in gen(fsck_dir, interop_dir):
        with open(os.path.join(out_dir, "seed-" + name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
