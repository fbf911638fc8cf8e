#!/usr/bin/env python3
"""Prints the 128-bit truncated powers of five that Sources/Importers/EiselLemire.swift
holds (the table of the Eisel-Lemire algorithm, as in fast_float's script/table_generation.py),
for decimal exponents SMALLEST..LARGEST."""
SMALLEST, LARGEST = -64, 64

def entry(c):
    return "0x%016X, 0x%016X," % (c >> 64, c & (2**64 - 1))

lines = []
for q in range(SMALLEST, LARGEST + 1):
    if q < 0:
        power5 = 5 ** -q
        z = 0
        while (1 << z) < power5:
            z += 1
        if q >= -27:
            c = 2 ** (z + 127) // power5 + 1
        else:
            c = 2 ** (2 * z + 128) // power5 + 1
            while c >= (1 << 128):
                c //= 2
    else:
        c = 5 ** q
        while c < (1 << 127):
            c *= 2
        while c >= (1 << 128):
            c //= 2
    lines.append("        %s // 5^%d" % (entry(c), q))
print("\n".join(lines))
