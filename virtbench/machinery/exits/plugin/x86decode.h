/*
 * x86 instruction decoding for vbexits.c (included there; pure functions, no QEMU API):
 * which instructions are port I/O, and which can never reach MMIO.
 */
#ifndef VBEXITS_X86DECODE_H
#define VBEXITS_X86DECODE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Port I/O decoding. Returns -1 if the instruction is not IN/OUT/INS/OUTS, the port
 * (0..255) for the imm8 forms, 256 for the DX forms.
 */
static int pio_port(const uint8_t *b, size_t n)
{
    size_t i = 0;
    while (i < n) {                      /* legacy prefixes */
        uint8_t c = b[i];
        if (c == 0x66 || c == 0x67 || c == 0xf2 || c == 0xf3 || c == 0xf0 || c == 0x2e ||
            c == 0x36 || c == 0x3e || c == 0x26 || c == 0x64 || c == 0x65)
            i++;
        else
            break;
    }
    if (i < n && (b[i] & 0xf0) == 0x40)  /* REX (64-bit code) */
        i++;
    if (i >= n)
        return -1;
    switch (b[i]) {
    case 0xe4: case 0xe5: case 0xe6: case 0xe7:
        return i + 1 < n ? b[i + 1] : -1;
    case 0xec: case 0xed: case 0xee: case 0xef:
    case 0x6c: case 0x6d: case 0x6e: case 0x6f:
        return 256;
    default:
        return -1;
    }
}

/*
 * Instructions that cannot touch MMIO in a kernel get no memory callback, which saves a
 * helper call on the hottest instructions there are: stack-only ones (push, pop, call,
 * ret, leave, pushf, popf; FF /2-/6 and 8F /0), per-CPU accesses (GS prefix), and common
 * ModRM instructions whose operand is a register, the stack ([rsp+...]) or RIP-relative
 * (the kernel image's own data). Anything not recognised keeps its callback.
 */
static int never_mmio(const uint8_t *b, size_t n)
{
    size_t i = 0;
    while (i < n && (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf2 || b[i] == 0xf3 ||
                     b[i] == 0xf0 || b[i] == 0x2e || b[i] == 0x36 || b[i] == 0x3e ||
                     b[i] == 0x26 || b[i] == 0x64 || b[i] == 0x65)) {
        if (b[i] == 0x65)
            return 1;                           /* %gs: per-CPU data */
        i++;
    }
    unsigned rex = 0;
    if (i < n && (b[i] & 0xf0) == 0x40)
        rex = b[i++];
    if (i >= n)
        return 0;
    uint8_t op = b[i];
    if ((op >= 0x50 && op <= 0x5f) || op == 0x68 || op == 0x6a || op == 0x9c || op == 0x9d ||
        op == 0xc2 || op == 0xc3 || op == 0xc9 || op == 0xe8)
        return 1;
    if (i + 1 < n) {
        unsigned reg = (b[i + 1] >> 3) & 7;
        if (op == 0xff && reg >= 2 && reg <= 6)
            return 1;
        if (op == 0x8f && reg == 0)
            return 1;
    }
    size_t m;                                   /* where the ModRM byte is */
    if (op == 0x0f) {
        if (i + 1 >= n)
            return 0;
        uint8_t op2 = b[i + 1];
        if (!(op2 == 0xb6 || op2 == 0xb7 || op2 == 0xbe || op2 == 0xbf ||
              (op2 >= 0x40 && op2 <= 0x4f) || op2 == 0xb0 || op2 == 0xb1 || op2 == 0xc1 ||
              op2 == 0xa3 || op2 == 0xab || op2 == 0xb3 || op2 == 0xbb || op2 == 0xba))
            return 0;
        m = i + 2;
    } else {
        bool alu = op < 0x40 && (op & 7) < 4;  /* add/or/adc/sbb/and/sub/xor/cmp r/m forms */
        if (!(alu || op == 0x63 || op == 0x69 || op == 0x6b || (op >= 0x80 && op <= 0x8b) ||
              op == 0xc0 || op == 0xc1 || op == 0xc6 || op == 0xc7 ||
              (op >= 0xd0 && op <= 0xd3) || op == 0xf6 || op == 0xf7 || op == 0xfe))
            return 0;
        m = i + 1;
    }
    if (m >= n)
        return 0;
    unsigned mod = b[m] >> 6, rm = b[m] & 7;
    if (mod == 3)
        return 1;                               /* registers only */
    if (mod == 0 && rm == 5)
        return 1;                               /* RIP-relative */
    if (rm == 4 && m + 1 < n && (b[m + 1] & 7) == 4 && !(rex & 1))
        return 1;                               /* SIB with base rsp */
    return 0;
}

#endif
