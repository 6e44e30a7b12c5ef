/*
 * primitives -- virtbench's price list of primitive operations: what one system call, clock
 * read, page fault, context switch, wake-up, timer expiry, dependent load and exit to the
 * device model costs in the environment it runs in, each in ns (timer lateness in us).
 *
 * Written for virtbench from the published methods: lmbench's lat_syscall (getppid),
 * lat_ctx (a token passed between processes over pipes), lat_pagefault and lat_mem_rd (a
 * chain of dependent loads), as McVoy and Staelin describe them (USENIX 1996) and their
 * manual pages say; kvm-unit-tests' vmexit tests (cpuid, an I/O port, MMIO: one access in a
 * tight loop); cyclictest's lateness of a periodic absolute sleep.  Each metric has its own
 * calibrated loop (prim_measure.h): the loop grows until it lasts --target-ms, then the median
 * of --repeats loops of that length, per operation.
 *
 * Families (--only a,b,...; the default is every family but ioport):
 *   syscall    syscall_ns (getppid through syscall(2): never a cached libc answer),
 *              clock_gettime_ns (CLOCK_MONOTONIC through libc: the vDSO when the clocksource
 *              allows it, a system call when not -- the JSON says which clocksource),
 *              rdtsc_ns, cpuid_ns (leaf 0: an unconditional exit under hardware
 *              virtualization)
 *   pagefault  pagefault_4k_ns (first write to a fresh anonymous 4 KiB page),
 *              pagefault_thp_ns (the same with a transparent 2 MiB page, allocated and
 *              zeroed whole), mmap_munmap_ns (one untouched anonymous page)
 *   ctxsw      ctxsw_same_cpu_ns, ctxsw_cross_cpu_ns (one hand-off of a byte between two
 *              processes over pipes: half a round trip, the pipe's write and read included),
 *              futex_cross_cpu_ns (one FUTEX_WAKE hand-off between two threads on two CPUs)
 *   timer      timer_p50_us, timer_p99_us, timer_max_us: lateness of clock_nanosleep to an
 *              absolute 1 ms period (cyclictest's measure), timer slack 1 ns, nearest rank
 *   memlat     memlat_{l1,l2,llc,llc4x}_{4k,2m}_ns: one dependent load over a random cycle of
 *              cache lines filling half of L1, half of L2, half of the last level and 4x the
 *              last level, on 4 KiB pages and on transparent 2 MiB pages
 *   ioport     ioport_out_ns (outb to port 0xed), mmio_read_ns (the HPET's counter): guests
 *              only, as root (prim_io.h says why those two are safe)
 * A metric the environment cannot give (one CPU: no cross-CPU figures; no huge pages granted)
 * is listed under "skipped" with the reason; one that failed, under "failed" (exit 1).
 *
 * Usage: primitives [--only LIST] [--cpus N] [--target-ms MS] [--repeats N]
 *                   [--timer-samples N] [--start-at T [--slot S]] [--samples]
 *        primitives --dump-chase N | --port-claimed FILE
 * --cpus N: use the first N CPUs this process may run on (default 2; 1 skips the cross-CPU
 * figures).
 * --start-at T: the first family starts at T on CLOCK_MONOTONIC; --slot S: family f (in the
 * order above, counting only those run) starts at T + f S.  "sections" stamps each family's
 * start and end.  --samples adds every timer sample.  --dump-chase N prints the successors of
 * an N-line cycle as the memlat family links them (a test checks it); --port-claimed FILE says
 * whether an ioports listing gives port 0xed to anything (as the ioport family checks the
 * guest's /proc/ioports before it writes).
 * Human-readable text goes to stderr; stdout carries exactly one JSON line.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "prim_io.h"
#include "prim_measure.h"
#include "prim_mem.h"
#include "prim_sched.h"

enum family { F_SYSCALL, F_PAGEFAULT, F_CTXSW, F_TIMER, F_MEMLAT, F_IOPORT, F_COUNT };
static const char *const FAMILY[F_COUNT] = {"syscall", "pagefault", "ctxsw",
                                            "timer",   "memlat",    "ioport"};

enum metric {
    M_SYSCALL, M_CLOCK, M_RDTSC, M_CPUID,
    M_PF_4K, M_PF_THP, M_MMAP,
    M_CTX_SAME, M_CTX_CROSS, M_FUTEX,
    M_TIMER_P50, M_TIMER_P99, M_TIMER_MAX,
    M_MEMLAT, /* 8 of them: working set x page size, in MEMLAT_NAMES' order */
    M_IOPORT = M_MEMLAT + 8, M_MMIO,
    M_COUNT
};

struct metric_def {
    const char *name;
    enum family family;
    const char *unit;
};

static const struct metric_def METRICS[M_COUNT] = {
    {"syscall_ns", F_SYSCALL, "ns"},          {"clock_gettime_ns", F_SYSCALL, "ns"},
    {"rdtsc_ns", F_SYSCALL, "ns"},            {"cpuid_ns", F_SYSCALL, "ns"},
    {"pagefault_4k_ns", F_PAGEFAULT, "ns"},   {"pagefault_thp_ns", F_PAGEFAULT, "ns"},
    {"mmap_munmap_ns", F_PAGEFAULT, "ns"},    {"ctxsw_same_cpu_ns", F_CTXSW, "ns"},
    {"ctxsw_cross_cpu_ns", F_CTXSW, "ns"},    {"futex_cross_cpu_ns", F_CTXSW, "ns"},
    {"timer_p50_us", F_TIMER, "us"},          {"timer_p99_us", F_TIMER, "us"},
    {"timer_max_us", F_TIMER, "us"},          {"memlat_l1_4k_ns", F_MEMLAT, "ns"},
    {"memlat_l2_4k_ns", F_MEMLAT, "ns"},      {"memlat_llc_4k_ns", F_MEMLAT, "ns"},
    {"memlat_llc4x_4k_ns", F_MEMLAT, "ns"},   {"memlat_l1_2m_ns", F_MEMLAT, "ns"},
    {"memlat_l2_2m_ns", F_MEMLAT, "ns"},      {"memlat_llc_2m_ns", F_MEMLAT, "ns"},
    {"memlat_llc4x_2m_ns", F_MEMLAT, "ns"},   {"ioport_out_ns", F_IOPORT, "ns"},
    {"mmio_read_ns", F_IOPORT, "ns"},
};

#define REASON_LEN 200
struct outcome {
    struct measurement m;
    int timer;                 /* a timer percentile: value only, no loop */
    double value;              /* for timer metrics */
    char skipped[REASON_LEN];  /* the environment cannot give it: why */
    char failed[REASON_LEN];   /* it went wrong: what */
};
static struct outcome out[M_COUNT];

static int run_family[F_COUNT];
static double section[F_COUNT][2];
static double start_at = 0.0, slot = 0.0;
static int print_samples = 0;
static long timer_samples = 1000;
static int use_cpus = 2;

/* what else the JSON line carries */
static struct cpus cpu;
static struct caches caches;
static char clocksource[64] = "";
static double pipe_overhead_ns = NAN, futex_slept_share = NAN;
static double faults_per_4k = NAN, faults_per_2m = NAN;
static long timer_overruns = 0;
static double *timer_us = NULL;
static struct memlat_note {
    long bytes;
    long cycle_length;
    long lines;
    long first_touch_faults;
} memlat_note[8];
static const char *const MEMLAT_SETS[4] = {"l1", "l2", "llc", "llc4x"};
static struct mmio mmio;
static volatile uint64_t sink;

static void skip(enum metric k, const char *fmt, const char *arg)
{
    snprintf(out[k].skipped, REASON_LEN, fmt, arg);
}

static void fail(enum metric k, const char *what)
{
    snprintf(out[k].failed, REASON_LEN, "%s: %s", what, strerror(errno));
}

/* -- syscall family -------------------------------------------------------------------- */

static double getppid_loop(void *ctx, long n)
{
    (void)ctx;
    double t0 = mono_seconds();
    for (long i = 0; i < n; i++)
        syscall(SYS_getppid);
    return mono_seconds() - t0;
}

static double clock_loop(void *ctx, long n)
{
    (void)ctx;
    struct timespec ts;
    uint64_t s = 0;
    double t0 = mono_seconds();
    for (long i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        s += (uint64_t)ts.tv_nsec;
    }
    double t1 = mono_seconds();
    sink = s;
    return t1 - t0;
}

static double rdtsc_loop(void *ctx, long n)
{
    (void)ctx;
    uint64_t s = 0;
    double t0 = mono_seconds();
    for (long i = 0; i < n; i++) {
        unsigned lo, hi;
        __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
        s += lo;
    }
    double t1 = mono_seconds();
    sink = s;
    return t1 - t0;
}

static double cpuid_loop(void *ctx, long n)
{
    (void)ctx;
    uint64_t s = 0;
    double t0 = mono_seconds();
    for (long i = 0; i < n; i++) {
        unsigned a = 0, b, c = 0, d;
        __asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
        s += b;
    }
    double t1 = mono_seconds();
    sink = s;
    return t1 - t0;
}

static void run_measure(enum metric k, loop_fn fn, void *ctx, long start, long cap, double div,
                        const char *what)
{
    if (measure(fn, ctx, start, cap, div, 1e9, &out[k].m) != 0)
        fail(k, what);
}

static void family_syscall(void)
{
    char path[] = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
    if (sysfs_word(path, clocksource, sizeof clocksource) != 0)
        clocksource[0] = '\0';
    for (char *c = clocksource; *c; c++) /* a word for JSON: nothing to escape */
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_' || *c == '-'))
            *c = '_';
    run_measure(M_SYSCALL, getppid_loop, NULL, 1000, 1000000000L, 1.0, "getppid");
    run_measure(M_CLOCK, clock_loop, NULL, 1000, 10000000000L, 1.0, "clock_gettime");
    run_measure(M_RDTSC, rdtsc_loop, NULL, 1000, 10000000000L, 1.0, "rdtsc");
    run_measure(M_CPUID, cpuid_loop, NULL, 100, 1000000000L, 1.0, "cpuid");
}

/* -- pagefault family ------------------------------------------------------------------ */

static const char *thp_setting(void)
{
    static char buf[80];
    if (sysfs_word("/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof buf) != 0)
        return "no THP in this kernel";
    return buf;
}

static void family_pagefault(void)
{
    struct faults f4 = {0, 0, 0};
    if (measure(fault_loop, &f4, 64, 1L << 22, 1.0, 1e9, &out[M_PF_4K].m) != 0)
        fail(M_PF_4K, "mapping fresh pages");
    else if (f4.touched > 0)
        faults_per_4k = (double)f4.faults / (double)f4.touched;

    struct faults f2 = {1, 0, 0};
    if (measure(fault_loop, &f2, 4, 2048, 1.0, 1e9, &out[M_PF_THP].m) != 0) {
        fail(M_PF_THP, "mapping fresh huge pages");
    } else if (f2.touched > 0) {
        /* one fault per 2 MiB page when it was huge, two (one per 4 KiB touched) if not */
        faults_per_2m = (double)f2.faults / (double)f2.touched;
        if (f2.faults == 0) {
            out[M_PF_THP].m.done = 0;
            skip(M_PF_THP, "%s", "cannot tell whether huge pages were granted: getrusage "
                                 "counts no page faults here");
        } else if (faults_per_2m > 1.5) {
            out[M_PF_THP].m.done = 0;
            skip(M_PF_THP, "transparent huge pages were not granted (THP setting: %s)",
                 thp_setting());
        }
    }
    run_measure(M_MMAP, mmap_loop, NULL, 100, 100000000L, 1.0, "mmap");
}

/* -- ctxsw family ---------------------------------------------------------------------- */

static void ctxsw_between(enum metric k, int parent_cpu, int child_cpu)
{
    struct pingpong pp;
    if (pin_to(parent_cpu) != 0) {
        fail(k, "pinning to a CPU");
        return;
    }
    if (pingpong_start(&pp, child_cpu) != 0) {
        fail(k, "starting the partner process");
    } else {
        run_measure(k, pingpong_loop, &pp, 100, 100000000L, 2.0, "passing the token");
        pingpong_stop(&pp);
    }
    unpin(&cpu);
}

static void family_ctxsw(void)
{
    int fds[2];
    struct measurement ovr;
    if (pipe(fds) == 0) {
        if (measure(pipe_overhead_loop, fds, 1000, 100000000L, 1.0, 1e9, &ovr) == 0)
            pipe_overhead_ns = ovr.value;
        close(fds[0]);
        close(fds[1]);
    }
    ctxsw_between(M_CTX_SAME, cpu.a, cpu.a);
    if (cpu.b < 0) {
        const char *why = cpu.count < 2 ? "this environment gives the process one CPU"
                                        : "--cpus 1: one CPU asked for";
        skip(M_CTX_CROSS, "%s", why);
        skip(M_FUTEX, "%s", why);
        return;
    }
    ctxsw_between(M_CTX_CROSS, cpu.a, cpu.b);

    struct futex_pair fp;
    if (pin_to(cpu.a) != 0 || futex_start(&fp, cpu.b) != 0) {
        fail(M_FUTEX, "starting the partner thread on another CPU");
    } else {
        run_measure(M_FUTEX, futex_loop, &fp, 100, 100000000L, 2.0, "futex");
        futex_stop(&fp);
        if (fp.slept + fp.early > 0)
            futex_slept_share = (double)fp.slept / (double)(fp.slept + fp.early);
    }
    unpin(&cpu);
}

/* -- timer family ---------------------------------------------------------------------- */

#define TIMER_INTERVAL_NS 1000000L

static void add_ns(struct timespec *t, long ns)
{
    t->tv_nsec += ns;
    while (t->tv_nsec >= 1000000000L) {
        t->tv_nsec -= 1000000000L;
        t->tv_sec++;
    }
}

static double ts_diff_ns(const struct timespec *a, const struct timespec *b)
{
    return (double)(a->tv_sec - b->tv_sec) * 1e9 + (double)(a->tv_nsec - b->tv_nsec);
}

/* cyclictest's measure: sleep to an absolute deadline every 1 ms; a sample is how long after
 * its deadline the sleeper was running again.  A wake-up later than the next deadline starts
 * the period afresh from now (an overrun, counted). */
static void family_timer(void)
{
    timer_us = calloc((size_t)timer_samples, sizeof *timer_us);
    if (timer_us == NULL) {
        fail(M_TIMER_P50, "allocating the samples");
        return;
    }
    int old_slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
    prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    struct timespec next, now;
    clock_gettime(CLOCK_MONOTONIC, &next);
    add_ns(&next, TIMER_INTERVAL_NS);
    for (long i = 0; i < timer_samples; i++) {
        int rc;
        while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL)) == EINTR)
            ;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (rc != 0) {
            errno = rc;
            fail(M_TIMER_P50, "clock_nanosleep");
            break;
        }
        timer_us[i] = ts_diff_ns(&now, &next) / 1000.0;
        add_ns(&next, TIMER_INTERVAL_NS);
        if (ts_diff_ns(&next, &now) <= 0.0) {
            timer_overruns++;
            next = now;
            add_ns(&next, TIMER_INTERVAL_NS);
        }
    }
    if (old_slack > 0)
        prctl(PR_SET_TIMERSLACK, (unsigned long)old_slack, 0, 0, 0);
    if (out[M_TIMER_P50].failed[0])
        return;
    double *sorted = malloc((size_t)timer_samples * sizeof *sorted);
    if (sorted == NULL) {
        fail(M_TIMER_P50, "allocating the samples");
        return;
    }
    memcpy(sorted, timer_us, (size_t)timer_samples * sizeof *sorted);
    qsort(sorted, (size_t)timer_samples, sizeof *sorted, cmp_double);
    const double pct[3] = {50.0, 99.0, 100.0};
    for (int q = 0; q < 3; q++) {
        out[M_TIMER_P50 + q].timer = 1;
        out[M_TIMER_P50 + q].value = nearest_rank(sorted, timer_samples, pct[q]);
    }
    free(sorted);
}

/* -- memlat family --------------------------------------------------------------------- */

static void memlat_one(int set, int huge)
{
    enum metric k = M_MEMLAT + huge * 4 + set;
    struct memlat_note *note = &memlat_note[huge * 4 + set];
    const long sizes[4] = {caches.l1d / 2, caches.l2 / 2, caches.llc / 2, caches.llc * 4};
    long bytes = sizes[set] / LINE * LINE;
    long page = huge ? PAGE_2M : PAGE_4K;
    long len = (bytes + page - 1) / page * page;
    note->bytes = bytes;
    note->lines = bytes / LINE;
    void *base;
    size_t base_len;
    char *region = map_aligned(len, huge, &base, &base_len);
    if (region == NULL) {
        fail(k, "mapping the working set");
        return;
    }
    long f0 = minor_faults();
    memset(region, 0, (size_t)len); /* first touch: how many faults tells the page size */
    note->first_touch_faults = minor_faults() - f0;
    if (huge && note->first_touch_faults == 0) {
        skip(k, "%s", "cannot tell whether huge pages were granted: getrusage counts no page "
                      "faults here");
    } else if (huge && note->first_touch_faults > 2 * (len / PAGE_2M)) {
        skip(k, "transparent huge pages were not granted (THP setting: %s)", thp_setting());
    } else if (link_cycle(region, note->lines) != 0) {
        fail(k, "linking the cycle");
    } else {
        note->cycle_length = cycle_length(region, note->lines); /* also warms the set up */
        if (note->cycle_length != note->lines) {
            errno = EINVAL;
            fail(k, "the chain is not one cycle through every line");
        } else {
            struct chase c = {(void **)region, NULL};
            run_measure(k, chase_loop, &c, 1024, 100000000000L, 1.0, "chasing");
        }
    }
    munmap(base, base_len);
}

static void family_memlat(void)
{
    for (int huge = 0; huge < 2; huge++)
        for (int set = 0; set < 4; set++)
            memlat_one(set, huge);
}

/* -- ioport family --------------------------------------------------------------------- */

static void family_ioport(void)
{
    char why[REASON_LEN];
    if (ioport_setup(why, sizeof why) != 0) {
        snprintf(out[M_IOPORT].failed, REASON_LEN, "%s", why);
    } else {
        run_measure(M_IOPORT, outb_loop, NULL, 100, 1000000000L, 1.0, "outb");
        ioperm(IO_PORT, 1, 0);
    }
    if (mmio_setup(&mmio, why, sizeof why) != 0) {
        snprintf(out[M_MMIO].failed, REASON_LEN, "%s", why);
    } else {
        run_measure(M_MMIO, mmio_loop, &mmio, 100, 1000000000L, 1.0, "mmio read");
        munmap(mmio.map, mmio.len);
    }
}

/* -- output ---------------------------------------------------------------------------- */

static void json_number(double v)
{
    if (isfinite(v))
        printf("%.9g", v);
    else
        printf("null");
}

static void print_json(double late, double slot_late, int failed)
{
    printf("{\"kernel\":\"primitives\",\"families\":[");
    int first = 1;
    for (int f = 0; f < F_COUNT; f++)
        if (run_family[f]) {
            printf("%s\"%s\"", first ? "" : ",", FAMILY[f]);
            first = 0;
        }
    printf("],\"target_s\":%.6f,\"repeats\":%d,\"cpus\":%d,\"cpu_a\":%d,\"cpu_b\":%d,",
           target_s, repeats, cpu.count, cpu.a, cpu.b);
    printf("\"caches\":{\"l1d\":%ld,\"l2\":%ld,\"llc\":%ld,\"source\":\"%s\"},", caches.l1d,
           caches.l2, caches.llc, caches.known ? "sysfs" : "assumed");
    printf("\"clocksource\":");
    if (clocksource[0])
        printf("\"%s\",", clocksource);
    else
        printf("null,");
    printf("\"results\":{");
    first = 1;
    for (int k = 0; k < M_COUNT; k++) {
        const struct outcome *o = &out[k];
        if (!o->timer && !o->m.done)
            continue;
        printf("%s\"%s\":{\"value\":", first ? "" : ",", METRICS[k].name);
        first = 0;
        if (o->timer) {
            json_number(o->value);
            printf(",\"unit\":\"%s\",\"samples\":%ld}", METRICS[k].unit, timer_samples);
            continue;
        }
        json_number(o->m.value);
        printf(",\"unit\":\"%s\",\"ops\":%ld,\"short\":%s,\"calibrated_s\":%.9f,\"runs_s\":[",
               METRICS[k].unit, o->m.ops, o->m.short_loop ? "true" : "false", o->m.calibrated_s);
        for (int r = 0; r < o->m.runs; r++)
            printf("%s%.9f", r ? "," : "", o->m.run_s[r]);
        printf("]}");
    }
    printf("},\"skipped\":{");
    first = 1;
    for (int k = 0; k < M_COUNT; k++)
        if (out[k].skipped[0]) {
            printf("%s\"%s\":\"%s\"", first ? "" : ",", METRICS[k].name, out[k].skipped);
            first = 0;
        }
    printf("},\"failed\":{");
    first = 1;
    for (int k = 0; k < M_COUNT; k++)
        if (out[k].failed[0]) {
            printf("%s\"%s\":\"%s\"", first ? "" : ",", METRICS[k].name, out[k].failed);
            first = 0;
        }
    printf("},\"sections\":{");
    first = 1;
    for (int f = 0; f < F_COUNT; f++)
        if (run_family[f]) {
            printf("%s\"%s\":[%.9f,%.9f]", first ? "" : ",", FAMILY[f], section[f][0],
                   section[f][1]);
            first = 0;
        }
    printf("},");
    print_start_at(start_at, late);
    if (slot > 0.0)
        printf(",\"slot_s\":%.9f,\"slot_late_s\":%.9f", slot, slot_late);
    else
        printf(",\"slot_s\":null,\"slot_late_s\":null");
    if (run_family[F_PAGEFAULT]) {
        printf(",\"pagefault\":{\"faults_per_4k_page\":");
        json_number(faults_per_4k);
        printf(",\"faults_per_2m_page\":");
        json_number(faults_per_2m);
        printf(",\"thp\":\"%s\"}", thp_setting());
    }
    if (run_family[F_CTXSW]) {
        printf(",\"ctxsw\":{\"pipe_overhead_ns\":");
        json_number(pipe_overhead_ns);
        printf(",\"futex_slept_share\":");
        json_number(futex_slept_share);
        printf("}");
    }
    if (run_family[F_TIMER]) {
        printf(",\"timer\":{\"interval_us\":%ld,\"samples\":%ld,\"overruns\":%ld",
               TIMER_INTERVAL_NS / 1000, timer_samples, timer_overruns);
        if (print_samples && timer_us != NULL) {
            printf(",\"samples_us\":[");
            for (long i = 0; i < timer_samples; i++)
                printf("%s%.3f", i ? "," : "", timer_us[i]);
            printf("]");
        }
        printf("}");
    }
    if (run_family[F_MEMLAT]) {
        printf(",\"memlat\":{");
        for (int x = 0; x < 8; x++)
            printf("%s\"%s_%s\":{\"bytes\":%ld,\"lines\":%ld,\"cycle_length\":%ld,"
                   "\"first_touch_faults\":%ld}",
                   x ? "," : "", MEMLAT_SETS[x % 4], x < 4 ? "4k" : "2m", memlat_note[x].bytes,
                   memlat_note[x].lines, memlat_note[x].cycle_length,
                   memlat_note[x].first_touch_faults);
        printf("}");
    }
    if (run_family[F_IOPORT]) {
        printf(",\"io\":{\"port\":\"0x%x\",\"mmio\":", IO_PORT);
        if (mmio.how)
            printf("\"HPET main counter through %s\",\"hpet_vendor\":\"0x%04x\"}", mmio.how,
                   mmio.vendor);
        else
            printf("null,\"hpet_vendor\":null}");
    }
    printf(",\"ok\":%s}\n", failed ? "false" : "true");
}

/* -- main ------------------------------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr,
            "usage: primitives [--only LIST] [--cpus N] [--target-ms MS] [--repeats N]\n"
            "                  [--timer-samples N] [--start-at T [--slot S]] [--samples]\n"
            "       primitives --dump-chase N | --port-claimed FILE\n"
            "  --only LIST        families, comma-separated: syscall, pagefault, ctxsw, timer,\n"
            "                     memlat, ioport (default: all but ioport; ioport writes an I/O\n"
            "                     port and reads the HPET: guests only, as root)\n"
            "  --cpus N           use the first N CPUs allowed (1 or 2, default 2; 1 skips the\n"
            "                     cross-CPU figures)\n"
            "  --target-ms MS     each timed loop lasts at least this long (default 10)\n"
            "  --repeats N        timed loops per metric after calibration, 1..%d (default 5)\n"
            "  --timer-samples N  1 ms periods the timer family sleeps (default 1000)\n"
            "  --start-at T       start the first family at T s of CLOCK_MONOTONIC (within an hour)\n"
            "  --slot S           with --start-at: family f starts at T + f S\n"
            "  --samples          print every timer sample\n"
            "  --dump-chase N     print the successors of an N-line cycle and exit\n"
            "  --port-claimed F   say whether ioports listing F gives port 0xed to anything\n",
            MAX_REPEATS);
}

static int parse_only(const char *list)
{
    char buf[256];
    if (strlen(list) >= sizeof buf)
        return -1;
    snprintf(buf, sizeof buf, "%s", list);
    memset(run_family, 0, sizeof run_family);
    int any = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int f = 0; f < F_COUNT; f++)
            if (strcmp(tok, FAMILY[f]) == 0) {
                run_family[f] = 1;
                found = any = 1;
            }
        if (!found)
            return -1;
    }
    return any ? 0 : -1;
}

int main(int argc, char **argv)
{
    for (int f = 0; f < F_COUNT; f++)
        run_family[f] = f != F_IOPORT;
    for (int ai = 1; ai < argc; ai++) {
        const char *opt = argv[ai];
        const char *val = ai + 1 < argc ? argv[ai + 1] : NULL;
        long n;
        double x;
        if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
            usage();
            return EXIT_OK;
        } else if (strcmp(opt, "--samples") == 0) {
            print_samples = 1;
            continue;
        } else if (strcmp(opt, "--dump-chase") == 0 && parse_long(val, 2, 1L << 24, &n) == 0) {
            return dump_chase(n);
        } else if (strcmp(opt, "--port-claimed") == 0 && val) {
            /* 0xed, the port the ioport family writes, and 0x80 beside it (the DMA page
             * registers and POST codes: claimed wherever there is a PC) */
            int c = port_claimed(val, IO_PORT), c80 = port_claimed(val, 0x80);
            printf("{\"kernel\":\"primitives-ioports\",\"port\":\"0x%x\",\"claimed\":%s,"
                   "\"claimed_0x80\":%s}\n", IO_PORT, c < 0 ? "null" : c ? "true" : "false",
                   c80 < 0 ? "null" : c80 ? "true" : "false");
            return EXIT_OK;
        } else if (strcmp(opt, "--only") == 0 && val && parse_only(val) == 0) {
        } else if (strcmp(opt, "--cpus") == 0 && parse_long(val, 1, 2, &n) == 0) {
            use_cpus = (int)n;
        } else if (strcmp(opt, "--target-ms") == 0 && parse_pos_double(val, 60000.0, &x) == 0) {
            target_s = x / 1000.0;
        } else if (strcmp(opt, "--repeats") == 0 && parse_long(val, 1, MAX_REPEATS, &n) == 0) {
            repeats = (int)n;
        } else if (strcmp(opt, "--timer-samples") == 0 &&
                   parse_long(val, 1, 10000000L, &n) == 0) {
            timer_samples = n;
        } else if (strcmp(opt, "--start-at") == 0 && parse_start_at(val, &start_at) == 0) {
        } else if (strcmp(opt, "--slot") == 0 && parse_pos_double(val, 3600.0, &slot) == 0) {
        } else {
            fprintf(stderr, "primitives: bad or incomplete option '%s'%s%s\n", opt,
                    val ? " " : "", val ? val : "");
            usage();
            return EXIT_USAGE;
        }
        ai++;
    }
    if (slot > 0.0 && start_at <= 0.0) {
        fprintf(stderr, "primitives: --slot needs --start-at (the slots count from it)\n");
        usage();
        return EXIT_USAGE;
    }
    /* a partner process that died makes a write to its pipe fail (EPIPE, a failed figure),
     * never kill this one */
    signal(SIGPIPE, SIG_IGN);
    if (allowed_cpus(&cpu) != 0) {
        fprintf(stderr, "primitives: cannot read this process's CPU affinity: %s\n",
                strerror(errno));
        return EXIT_INTERNAL;
    }
    if (use_cpus < 2)
        cpu.b = -1;
    caches = read_caches(cpu.a);

    void (*const run[F_COUNT])(void) = {family_syscall, family_pagefault, family_ctxsw,
                                        family_timer,   family_memlat,    family_ioport};
    double late = start_at > 0.0 ? wait_until(start_at) : 0.0, slot_late = 0.0;
    int index = 0;
    for (int f = 0; f < F_COUNT; f++) {
        if (!run_family[f])
            continue;
        double due = start_at + (double)index * slot;
        if (slot > 0.0 && index > 0)
            wait_until(due);
        index++;
        fprintf(stderr, "primitives: %s\n", FAMILY[f]);
        section[f][0] = mono_seconds();
        /* measured at the start itself, as stream.c does */
        if (slot > 0.0 && section[f][0] - due > slot_late)
            slot_late = section[f][0] - due;
        run[f]();
        section[f][1] = mono_seconds();
    }

    int failed = 0;
    for (int k = 0; k < M_COUNT; k++) {
        const struct outcome *o = &out[k];
        if (o->failed[0]) {
            failed = 1;
            fprintf(stderr, "primitives: %s FAILED: %s\n", METRICS[k].name, o->failed);
        } else if (o->skipped[0]) {
            fprintf(stderr, "primitives: %s skipped: %s\n", METRICS[k].name, o->skipped);
        } else if (o->timer) {
            fprintf(stderr, "primitives: %-22s %12.3f %s\n", METRICS[k].name, o->value,
                    METRICS[k].unit);
        } else if (o->m.done) {
            fprintf(stderr, "primitives: %-22s %12.3f %s (%ld per loop%s)\n", METRICS[k].name,
                    o->m.value, METRICS[k].unit, o->m.ops,
                    o->m.short_loop ? ", shorter than the target" : "");
        }
    }
    print_json(late, slot_late, failed);
    free(timer_us);
    return failed ? EXIT_INTERNAL : EXIT_OK;
}
