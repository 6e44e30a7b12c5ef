"""The cpu-suite's inputs: made in the environment, deterministically, by GENERATOR.

GENERATOR is python3 source run in the environment (`python3 -c GENERATOR PROGRAM SEED
KNOBS_JSON DIR`; python3 is there for the agent), like blast's database: the same seed and
knobs give the same files everywhere (random.Random(seed) is stable across Python 3
versions). Besides each program's input it writes what a correct run must give where the
generator can know it (`expected`: gcc's program output, xalan's transformation), so that a
wrong result is a failed trial, never a time. None of it is timed.
"""
from __future__ import annotations

GENERATOR = r'''
import json, os, random, sys

M = 0xFFFFFFFF
AMINO = "ACDEFGHIKLMNPQRSTVWY"


def bzip2(r, k, d):
    # text of words drawn from a skewed vocabulary: compressible like SPEC's mixed input
    vocab = ["".join(r.choices("etaoinshrdlucmfwypvbgkjqxz", k=r.randint(2, 11)))
             for _ in range(6000)]
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    with open(d + "/input.txt", "w") as f:
        size = 0
        while size < k["bzip2_mb"] * 1000000:
            line = " ".join(r.choices(vocab, weights, k=5000)) + "\n"
            f.write(line)
            size += len(line)


def gcc_stmt(r):
    kind = r.randrange(5)
    if kind == 0:
        return ("add", r.randrange(3), r.randrange(3), r.getrandbits(32))
    if kind == 1:
        return ("rot", r.randrange(3), r.randint(1, 31), 0)
    if kind == 2:
        return ("mul", r.randrange(3), r.randrange(3), r.getrandbits(32) | 1)
    if kind == 3:
        return ("if", r.randrange(3), r.randrange(3), 1 << r.randrange(32))
    return ("switch", r.randrange(3), r.randint(1, 31), r.getrandbits(32))


def gcc_c(fn, stmts, loops):
    v = "abc"
    out = ["static uint32_t f%d(uint32_t x) {" % fn,
           "  uint32_t a = x, b = x ^ 0x9e3779b9u, c = %uu;" % (fn * 2654435761 & M),
           "  for (uint32_t i = 0; i < %du; i++) {" % loops]
    for op, p, q, k in stmts:
        x, y = v[p], v[q % 3]
        if op == "add":
            out.append("    %s += %s ^ %uu;" % (x, y, k))
        elif op == "rot":
            out.append("    %s = (%s << %d) | (%s >> %d);" % (x, x, q, x, 32 - q))
        elif op == "mul":
            out.append("    %s ^= %s * %uu + i;" % (x, y, k))
        elif op == "if":
            out.append("    if (%s & %uu) %s += c; else %s -= a;" % (x, k, y, y))
        else:
            out.append("    switch ((%s ^ i) & 3) { case 0: a += %uu; break; case 1: b ^= %uu;"
                       " break; case 2: c += b; break; default: a ^= c >> %d; }" % (x, k, k, q))
    out += ["  }", "  return a ^ b ^ c;", "}"]
    return "\n".join(out)


def gcc_run(fn, stmts, loops, x):
    s = [x, x ^ 0x9e3779b9, fn * 2654435761 & M]
    for i in range(loops):
        for op, p, q, k in stmts:
            if op == "add":
                s[p] = (s[p] + (s[q % 3] ^ k)) & M
            elif op == "rot":
                s[p] = ((s[p] << q) | (s[p] >> (32 - q))) & M
            elif op == "mul":
                s[p] ^= (s[q % 3] * k + i) & M
            elif op == "if":
                if s[p] & k:
                    s[q % 3] = (s[q % 3] + s[2]) & M
                else:
                    s[q % 3] = (s[q % 3] - s[0]) & M
            else:
                sel = (s[p] ^ i) & 3
                if sel == 0:
                    s[0] = (s[0] + k) & M
                elif sel == 1:
                    s[1] ^= k
                elif sel == 2:
                    s[2] = (s[2] + s[1]) & M
                else:
                    s[0] ^= s[2] >> q
    return s[0] ^ s[1] ^ s[2]


def gcc(r, k, d):
    # a C file of many functions (loops, switches, branches) and a main that chains them;
    # the generator works out what the compiled program must print
    parts = ["#include <stdint.h>", "#include <stdio.h>"]
    x = 12345
    n = k["gcc_functions"]
    for fn in range(n):
        stmts = [gcc_stmt(r) for _ in range(r.randint(8, 24))]
        loops = r.randint(2, 9)
        parts.append(gcc_c(fn, stmts, loops))
        x = gcc_run(fn, stmts, loops, x)
    parts.append("int main(void) {\n  uint32_t x = 12345u;")
    parts += ["  x = f%d(x);" % fn for fn in range(n)]
    parts.append('  printf("%u\\n", x);\n  return 0;\n}')
    with open(d + "/input.c", "w") as f:
        f.write("\n".join(parts) + "\n")
    with open(d + "/expected", "w") as f:
        f.write("%d\n" % x)


def gnugo(r, k, d):
    # a GTP session: GNU Go plays both sides for a fixed number of moves, then estimates
    lines = ["boardsize 19", "clear_board", "komi 6.5"]
    for _ in range(k["gnugo_moves"] // 2):
        lines += ["genmove black", "genmove white"]
    lines += ["estimate_score", "quit"]
    with open(d + "/input.gtp", "w") as f:
        f.write("\n".join(lines) + "\n")


def mutate(r, seq, rate):
    return "".join(r.choice(AMINO) if r.random() < rate else a for a in seq)


def hmmer(r, k, d):
    # a family (an ancestor and 24 relatives, aligned) to build the profile from; a database
    # of random proteins with `hmmer_planted` distant relatives hidden in it
    ancestor = "".join(r.choices(AMINO, k=200))
    with open(d + "/family.afa", "w") as f:
        for i in range(24):
            f.write(">fam%d\n%s\n" % (i, mutate(r, ancestor, 0.25)))
    planted = set(r.sample(range(k["hmmer_sequences"]), k["hmmer_planted"]))
    with open(d + "/db.fa", "w") as f:
        for i in range(k["hmmer_sequences"]):
            if i in planted:
                seq = "".join(r.choices(AMINO, k=50)) + mutate(r, ancestor, 0.4) + \
                    "".join(r.choices(AMINO, k=50))
                f.write(">planted%d\n%s\n" % (i, seq))
            else:
                f.write(">rand%d\n%s\n" % (i, "".join(r.choices(AMINO, k=300))))


def povray(r, k, d):
    # reflective and refractive spheres over a checkered plane, placed from the seed
    lines = ["#version 3.7;", "global_settings { assumed_gamma 1.0 max_trace_level 10 }",
             "camera { location <0, 3, -8> look_at <0, 1, 0> }",
             "light_source { <10, 20, -10> color rgb 1 }",
             "light_source { <-10, 8, -4> color rgb 0.4 }",
             "plane { y, 0 pigment { checker rgb 1 rgb 0.2 } finish { reflection 0.2 } }"]
    for _ in range(48):
        x, y, z = r.uniform(-4, 4), r.uniform(0, 3), r.uniform(-2, 6)
        red, green, blue = r.random(), r.random(), r.random()
        lines.append("sphere { <%.4f, %.4f, %.4f>, %.4f pigment { rgbf <%.4f, %.4f, %.4f, 0.5> }"
                     " finish { reflection 0.3 phong 0.8 } interior { ior 1.5 } }"
                     % (x, y, z, r.uniform(0.2, 0.7), red, green, blue))
    with open(d + "/input.pov", "w") as f:
        f.write("\n".join(lines) + "\n")


XSLT = """<?xml version="1.0"?>
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
<xsl:output method="text"/>
<xsl:key name="by-customer" match="order" use="@customer"/>
<xsl:template match="/">
<xsl:for-each select="orders/order[generate-id() = generate-id(key('by-customer', @customer)[1])]">
<xsl:sort select="@customer"/>
<xsl:variable name="mine" select="key('by-customer', @customer)"/>
<xsl:value-of select="@customer"/><xsl:text> </xsl:text>
<xsl:value-of select="count($mine)"/><xsl:text> </xsl:text>
<xsl:value-of select="count($mine/item)"/><xsl:text> </xsl:text>
<xsl:value-of select="sum($mine/item/@qty)"/><xsl:text> </xsl:text>
<xsl:for-each select="$mine/item"><xsl:sort select="@price" data-type="number" order="descending"/>
<xsl:if test="position() = 1"><xsl:value-of select="@price"/></xsl:if></xsl:for-each>
<xsl:text>&#10;</xsl:text>
</xsl:for-each>
<xsl:for-each select="orders/order[count(item) &gt;= 6]">
<xsl:sort select="@id" data-type="number" order="descending"/>
<xsl:value-of select="@id"/><xsl:text>&#10;</xsl:text>
</xsl:for-each>
</xsl:template>
</xsl:stylesheet>
"""


def xalan(r, k, d):
    # orders of customers; the stylesheet groups them by customer (Muenchian keys), sums and
    # sorts; the generator writes the text the transformation must give
    customers = ["c%05d" % i for i in range(max(1, k["xalan_orders"] // 20))]
    per = {}
    big = []
    with open(d + "/input.xml", "w") as f:
        f.write('<?xml version="1.0"?>\n<orders>\n')
        for oid in range(k["xalan_orders"]):
            cust = r.choice(customers)
            items = [(r.randint(1, 9), r.randint(1, 99999)) for _ in range(r.randint(1, 8))]
            f.write('<order id="%d" customer="%s">%s</order>\n' % (oid, cust, "".join(
                '<item sku="s%d" qty="%d" price="%d"/>' % (j, q, p)
                for j, (q, p) in enumerate(items))))
            n, i, qty, top = per.get(cust, (0, 0, 0, 0))
            per[cust] = (n + 1, i + len(items), qty + sum(q for q, _ in items),
                         max([top] + [p for _, p in items]))
            if len(items) >= 6:
                big.append(oid)
        f.write("</orders>\n")
    with open(d + "/style.xsl", "w") as f:
        f.write(XSLT)
    with open(d + "/expected", "w") as f:
        for cust in sorted(per):
            f.write("%s %d %d %d %d\n" % ((cust,) + per[cust]))
        for oid in sorted(big, reverse=True):
            f.write("%d\n" % oid)


def x264(r, k, d):
    # I420 frames: a blocky texture (and its chroma) panned a few pixels each frame
    w, h = 640, 360
    tex_w, tex_h = w + 4 * k["x264_frames"] + 64, h + 2 * k["x264_frames"] + 64
    rows = []
    for y in range(0, tex_h, 4):
        row = bytes(b for b in r.randbytes(tex_w // 4 + 1) for _ in range(4))[:tex_w]
        rows += [row] * 4
    rows = rows[:tex_h]
    chroma = bytes([128]) * (w * h // 2)
    with open(d + "/input.yuv", "wb") as f:
        for i in range(k["x264_frames"]):
            dx, dy = 4 * i, 2 * i
            f.write(b"".join(rows[dy + y][dx:dx + w] for y in range(h)))
            f.write(chroma)


program, seed, knobs, out = sys.argv[1:]
if program != "stockfish":
    globals()[program](random.Random(int(seed)), json.loads(knobs), out)
'''
