/* primitives: exits to the device model -- an I/O port write and an MMIO register read --
 * measured as kvm-unit-tests' vmexit tests measure theirs (a tight loop of the one access).
 * Only in guests, as root (virtbench asks only where the environment declares guest_root_io).
 * Header-only: part of primitives.c's single translation unit.
 *
 * The port: 0xed.  Port 0x80 (POST codes) is where Linux writes for its I/O delay, so a
 * device model may watch it; 0xed is the other port Linux's io_delay=0xed option writes to
 * for the same purpose, because on PCs nothing decodes it: a write there is dropped.  QEMU
 * (pc and q35) has nothing there either: the write is an exit that the device model answers
 * with nothing (an unassigned I/O access), like kvm-unit-tests' inl_from_qemu, which reads an
 * unassigned port.  The kernel checks that the guest's /proc/ioports gives 0xed to nothing
 * (in QEMU's pc and q35 machines only the PCI host bridge's window 0000-0cf7 spans it:
 * tests/fixtures/kernels/ioports-qemu-*.txt).
 *
 * The register: the main counter of the HPET (offset 0xf0 of its register page), read through
 * /dev/hpet's read-only mapping (or /dev/mem at the HPET's address where /dev/hpet is
 * missing).  QEMU emulates the HPET in the device model (KVM has no HPET of its own), a read
 * of its counter changes nothing, and it is the very read a guest whose clocksource is hpet
 * makes for every clock read. */
#ifndef VIRTBENCH_PRIM_IO_H
#define VIRTBENCH_PRIM_IO_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/io.h>
#include <sys/mman.h>
#include <unistd.h>

#include "prim_measure.h"

#define IO_PORT 0xed
#define HPET_BASE 0xfed00000UL
#define HPET_CAPS 0x000   /* general capabilities and ID: vendor in bits 31:16 */
#define HPET_COUNTER 0x0f0 /* main counter value, low 32 bits */

/* CPUID leaf 1, ECX bit 31: set by every hypervisor for its guests, clear on bare metal. */
static int cpuid_says_guest(void)
{
    unsigned a = 1, b, c = 0, d;
    __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
    return (c >> 31) & 1;
}

/* Does an ioports listing (`path`: /proc/ioports) give `port` to anything?  1 yes, 0 no, -1
 * cannot tell.  A "PCI Bus" entry is the host bridge's window (0000-0cf7 holds every legacy
 * port), not a claim: what claims a port is a device or driver entry inside or beside it. */
static int port_claimed(const char *path, unsigned port)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    char line[256];
    int claimed = 0, lines = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned lo, hi;
        int name_at = 0;
        if (sscanf(line, " %x-%x : %n", &lo, &hi, &name_at) < 2 || name_at == 0)
            continue;
        lines++;
        if (strncmp(line + name_at, "PCI Bus", 7) == 0)
            continue;
        if (lo <= port && port <= hi)
            claimed = 1;
    }
    fclose(f);
    return lines == 0 ? -1 : claimed;
}

/* Permission to write IO_PORT (root: CAP_SYS_RAWIO), in a guest only, on a port nothing
 * claims.  0, or -1 with `why` set. */
static int ioport_setup(char *why, size_t len)
{
    if (!cpuid_says_guest()) {
        snprintf(why, len, "CPUID says this is not a guest: no port is written on bare metal");
        return -1;
    }
    int claimed = port_claimed("/proc/ioports", IO_PORT);
    if (claimed != 0) {
        snprintf(why, len, claimed > 0 ? "port 0x%x is claimed in /proc/ioports"
                                       : "cannot read /proc/ioports to check port 0x%x",
                 IO_PORT);
        return -1;
    }
    if (ioperm(IO_PORT, 1, 1) != 0) {
        snprintf(why, len, "ioperm(0x%x): %s (needs root)", IO_PORT, strerror(errno));
        return -1;
    }
    return 0;
}

static double outb_loop(void *ctx, long n)
{
    (void)ctx;
    double t0 = mono_seconds();
    for (long i = 0; i < n; i++)
        __asm__ volatile("outb %b0, %w1" : : "a"(0), "Nd"(IO_PORT));
    return mono_seconds() - t0;
}

struct mmio {
    volatile uint32_t *regs;
    void *map;
    size_t len;
    const char *how;
    uint32_t vendor;
    uint32_t sink;
};

/* Map the HPET's register page read-only.  0, or -1 with `why` set. */
static int mmio_setup(struct mmio *m, char *why, size_t len)
{
    memset(m, 0, sizeof *m);
    if (!cpuid_says_guest()) {
        snprintf(why, len, "CPUID says this is not a guest: no device register is read on bare "
                           "metal");
        return -1;
    }
    m->len = 4096;
    int fd = open("/dev/hpet", O_RDONLY);
    off_t offset = 0;
    m->how = "/dev/hpet";
    if (fd < 0) {
        fd = open("/dev/mem", O_RDONLY | O_SYNC);
        offset = (off_t)HPET_BASE;
        m->how = "/dev/mem at 0xfed00000";
    }
    if (fd < 0) {
        snprintf(why, len, "neither /dev/hpet nor /dev/mem can be opened: %s", strerror(errno));
        return -1;
    }
    m->map = mmap(NULL, m->len, PROT_READ, MAP_SHARED, fd, offset);
    close(fd);
    if (m->map == MAP_FAILED) {
        snprintf(why, len, "mapping the HPET through %s: %s", m->how, strerror(errno));
        m->map = NULL;
        return -1;
    }
    m->regs = m->map;
    m->vendor = m->regs[HPET_CAPS / 4] >> 16;
    if (m->vendor == 0 || m->vendor == 0xffff) {
        snprintf(why, len, "no HPET at %s (capabilities register 0x%08x)", m->how,
                 m->regs[HPET_CAPS / 4]);
        munmap(m->map, m->len);
        m->map = NULL;
        return -1;
    }
    return 0;
}

static double mmio_loop(void *ctx, long n)
{
    struct mmio *m = ctx;
    uint32_t sum = 0;
    double t0 = mono_seconds();
    for (long i = 0; i < n; i++)
        sum += m->regs[HPET_COUNTER / 4];
    double t1 = mono_seconds();
    m->sink = sum;
    return t1 - t0;
}

#endif
