/* primitives: page faults, mmap/munmap and dependent-load latency (a pointer chase over a
 * random cycle).  Header-only: part of primitives.c's single translation unit. */
#ifndef VIRTBENCH_PRIM_MEM_H
#define VIRTBENCH_PRIM_MEM_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "prim_measure.h"

#define PAGE_4K 4096L
#define PAGE_2M (2L * 1024 * 1024)
#define LINE 64L
#define FAULT_CHUNK_4K 32768L /* pages per mapping: 128 MiB */
#define FAULT_CHUNK_2M 64L    /* huge pages per mapping: 128 MiB */

/* An anonymous private mapping of `len` bytes starting on a 2 MiB boundary, with transparent
 * huge pages asked for (huge) or refused; *base and *base_len: what to munmap.  NULL on
 * failure. */
static char *map_aligned(long len, int huge, void **base, size_t *base_len)
{
    size_t total = (size_t)len + (size_t)PAGE_2M;
    char *raw = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *p = (char *)(((uintptr_t)raw + (uintptr_t)PAGE_2M - 1) & ~(uintptr_t)(PAGE_2M - 1));
    /* a kernel without THP refuses both advices (EINVAL) and gives 4 KiB pages anyway; what
     * the pages were is told by the fault count (fault_loop) or the first touch (memlat) */
    (void)madvise(p, (size_t)len, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    *base = raw;
    *base_len = total;
    return p;
}

/* -- minor faults on fresh anonymous pages ------------------------------------------------- */

struct faults {
    int huge;      /* 2 MiB pages asked for */
    long touched;  /* pages (4k) or huge pages (2m) touched by the timed loops */
    long faults;   /* minor faults those loops took (getrusage) */
};

/* n first touches (a write, so the kernel must allocate and zero a page) of fresh pages, in
 * mappings of at most FAULT_CHUNK pages; only the touches are timed.  With huge pages, each
 * 2 MiB page is also touched 4 KiB further in: one fault per 2 MiB page if it is huge, two if
 * the kernel gave 4 KiB pages (how the kernel tells which it got, with no /proc). */
static double fault_loop(void *ctx, long n)
{
    struct faults *f = ctx;
    const long step = f->huge ? PAGE_2M : PAGE_4K;
    const long chunk = f->huge ? FAULT_CHUNK_2M : FAULT_CHUNK_4K;
    double elapsed = 0.0;
    for (long left = n; left > 0;) {
        long pages = left < chunk ? left : chunk;
        void *base;
        size_t base_len;
        char *p = map_aligned(pages * step, f->huge, &base, &base_len);
        if (p == NULL)
            return -1.0;
        long f0 = minor_faults();
        double t0 = mono_seconds();
        if (f->huge) {
            for (long i = 0; i < pages; i++) {
                ((volatile char *)p)[i * step] = 1;
                ((volatile char *)p)[i * step + PAGE_4K] = 1;
            }
        } else {
            for (long i = 0; i < pages; i++)
                ((volatile char *)p)[i * step] = 1;
        }
        double t1 = mono_seconds();
        long f1 = minor_faults();
        munmap(base, base_len);
        elapsed += t1 - t0;
        f->touched += pages;
        f->faults += f1 - f0;
        left -= pages;
    }
    return elapsed;
}

/* -- mmap/munmap ------------------------------------------------------------------------ */

/* n cycles of mapping one anonymous 4 KiB page and unmapping it, untouched. */
static double mmap_loop(void *ctx, long n)
{
    (void)ctx;
    double t0 = mono_seconds();
    for (long i = 0; i < n; i++) {
        void *p = mmap(NULL, PAGE_4K, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return -1.0;
        munmap(p, PAGE_4K);
    }
    return mono_seconds() - t0;
}

/* -- caches ----------------------------------------------------------------------------- */

struct caches {
    long l1d, l2, llc; /* bytes */
    int known;         /* 1: read from sysfs; 0: assumed */
};

static long sysfs_size(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    long v = -1;
    char unit = 0;
    int got = fscanf(f, "%ld%c", &v, &unit);
    fclose(f);
    if (got < 1 || v <= 0)
        return -1;
    return unit == 'K' ? v * 1024 : unit == 'M' ? v * 1024 * 1024 : v;
}

static int sysfs_word(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    int ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
    return ok ? 0 : -1;
}

/* The data caches CPU `cpu` sees (sysfs): L1 data, L2, and its last level; assumed 32 KiB,
 * 512 KiB and 8 MiB when sysfs says nothing (gVisor, say). */
static struct caches read_caches(int cpu)
{
    struct caches c = {32 * 1024, 512 * 1024, 8 * 1024 * 1024, 0};
    long l1 = -1, l2 = -1, top = -1;
    int top_level = 0;
    for (int idx = 0; idx < 16; idx++) {
        char path[160], type[32], level[16];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/type", cpu, idx);
        if (sysfs_word(path, type, sizeof type) != 0)
            break;
        if (strcmp(type, "Instruction") == 0)
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, idx);
        if (sysfs_word(path, level, sizeof level) != 0)
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/size", cpu, idx);
        long size = sysfs_size(path);
        int lv = atoi(level);
        if (size <= 0)
            continue;
        if (lv == 1)
            l1 = size;
        else if (lv == 2)
            l2 = size;
        if (lv >= top_level) {
            top_level = lv;
            top = size;
        }
    }
    if (l1 > 0 && top > 0) {
        c.l1d = l1;
        c.l2 = l2 > 0 ? l2 : l1 * 8;
        c.llc = top;
        c.known = 1;
    }
    return c;
}

/* -- dependent loads: a pointer chase over one random cycle ------------------------------ */

/* splitmix64: a fixed, well-mixed sequence (the same cycle on every run). */
static uint64_t mix_state = 0x243f6a8885a308d3ULL;
static uint64_t next_random(void)
{
    uint64_t z = (mix_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Link `lines` cache lines of `region` (64 bytes apart) into one cycle in random order: a
 * Fisher-Yates shuffle of the lines, each pointing to the next in that order and the last to
 * the first, so a chase visits every line once per lap and the next address is unknown until
 * the load before it returns (no prefetcher can guess it).  0, or -1 out of memory. */
static int link_cycle(char *region, long lines)
{
    uint32_t *order = malloc((size_t)lines * sizeof *order);
    if (order == NULL)
        return -1;
    for (long i = 0; i < lines; i++)
        order[i] = (uint32_t)i;
    for (long i = lines - 1; i > 0; i--) {
        long j = (long)(next_random() % (uint64_t)(i + 1));
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (long k = 0; k < lines; k++) {
        long from = order[k], to = order[(k + 1) % lines];
        *(void **)(region + from * LINE) = region + to * LINE;
    }
    free(order);
    return 0;
}

/* How many loads a chase from `start` takes to come back to it (at most `limit`): `lines`
 * when the lines form one cycle through all of them. */
static long cycle_length(char *start, long limit)
{
    void **p = (void **)start;
    long steps = 0;
    do {
        p = (void **)*p;
        steps++;
    } while ((char *)p != start && steps <= limit);
    return steps;
}

struct chase {
    void **pos;     /* where the chase stands (it goes on from there, loop after loop) */
    void *sink;
};

/* n dependent loads, 16 to an unrolled step (lmbench unrolls 100). */
static double chase_loop(void *ctx, long n)
{
    struct chase *c = ctx;
    void **p = c->pos;
    double t0 = mono_seconds();
    long i = 0;
    for (; i + 16 <= n; i += 16) {
#define HOP p = (void **)*p;
        HOP HOP HOP HOP HOP HOP HOP HOP HOP HOP HOP HOP HOP HOP HOP HOP
#undef HOP
    }
    for (; i < n; i++)
        p = (void **)*p;
    double t1 = mono_seconds();
    c->pos = p;
    c->sink = p;
    return t1 - t0;
}

/* --dump-chase N: the successor of every line of an N-line cycle, as the kernel links it (a
 * test checks it is one cycle through all N). */
static int dump_chase(long lines)
{
    void *base;
    size_t base_len;
    char *region = map_aligned(lines * LINE, 0, &base, &base_len);
    if (region == NULL || link_cycle(region, lines) != 0)
        return EXIT_INTERNAL;
    printf("{\"kernel\":\"primitives-chase\",\"lines\":%ld,\"next\":[", lines);
    for (long i = 0; i < lines; i++) {
        char *to = *(char **)(region + i * LINE);
        printf("%s%ld", i ? "," : "", (long)((to - region) / LINE));
    }
    printf("],\"cycle_length\":%ld}\n", cycle_length(region, lines));
    munmap(base, base_len);
    return EXIT_OK;
}

#endif
