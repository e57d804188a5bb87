#!/usr/bin/env python3
"""Writes mutants of an HDF5 file: copies of it with a few bytes changed, for the reader fuzz
(fuzz/run_mutants.py). Deterministic: mutant i depends only on (--seed, i) and the input bytes.

usage: mutate_trace.py IN.h5 OUTDIR [--count N] [--seed S]

Each mutant gets one of these mutations (chosen at random, positions uniform over the file or, for half
of them, within 512 bytes after an HDF5 metadata signature, where a change hits structure rather than
compressed data):
  flip       1-8 single-bit flips
  bytes      a run of 1-64 random bytes
  field      a 1/2/4/8-byte little-endian field set to an interesting value (0, all ones, 2^31, 2^32, ...)
  truncate   the file cut at a random length
  zero       a run of 16-4096 bytes set to zero
"""
import argparse
import os
import random
import struct

SIGNATURES = [b"\x89HDF", b"OHDR", b"OCHK", b"TREE", b"HEAP", b"SNOD", b"GCOL", b"BTHD", b"BTIN", b"BTLF",
              b"FRHP", b"FHDB", b"FHIB", b"FSHD", b"FSSE", b"FAHD", b"FADB", b"EAHD", b"EADB", b"EAIB", b"EASB"]
INTERESTING = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
               1 << 32, (1 << 32) + 1, (1 << 62), (1 << 63) - 1, 1 << 63, (1 << 64) - 1]


def metadata_offsets(data):
    out = []
    for sig in SIGNATURES:
        start = 0
        while True:
            i = data.find(sig, start)
            if i < 0:
                break
            out.append(i)
            start = i + 1
    return sorted(out)


def mutate(data, rng, anchors):
    d = bytearray(data)
    n = len(d)

    def pos(width=1):
        if anchors and rng.random() < 0.5:
            p = rng.choice(anchors) + rng.randrange(512)
        else:
            p = rng.randrange(n)
        return max(0, min(p, n - width))

    kind = rng.choice(["flip", "flip", "bytes", "field", "field", "truncate", "zero"])
    if kind == "flip":
        for _ in range(rng.randint(1, 8)):
            p = pos()
            d[p] ^= 1 << rng.randrange(8)
    elif kind == "bytes":
        k = rng.randint(1, 64)
        p = pos(k)
        d[p:p + k] = bytes(rng.randrange(256) for _ in range(k))
    elif kind == "field":
        w = rng.choice([1, 2, 4, 8])
        p = pos(w)
        v = rng.choice(INTERESTING) & ((1 << (8 * w)) - 1)
        d[p:p + w] = v.to_bytes(w, "little")
    elif kind == "truncate":
        d = d[:rng.randrange(n)]
    else:
        k = rng.randint(16, 4096)
        p = pos(k)
        d[p:p + k] = bytes(min(k, n - p))
    return kind, bytes(d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("outdir")
    ap.add_argument("--count", type=int, default=1500)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    data = open(a.input, "rb").read()
    anchors = metadata_offsets(data)
    os.makedirs(a.outdir, exist_ok=True)
    with open(os.path.join(a.outdir, "mutations.tsv"), "w") as log:
        for i in range(a.count):
            rng = random.Random(a.seed * 1_000_003 + i)
            kind, m = mutate(data, rng, anchors)
            name = "m%05d.h5" % i
            with open(os.path.join(a.outdir, name), "wb") as f:
                f.write(m)
            log.write("%s\t%s\n" % (name, kind))


if __name__ == "__main__":
    main()
