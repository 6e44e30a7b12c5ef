/*
 * stream -- virtbench implementation of the STREAM memory-bandwidth kernels
 * described by John D. McCalpin: Copy c=a, Scale b=q*c, Add c=a+b,
 * Triad a=b+q*c with q = 3.0 on three double arrays.
 *
 * Written for virtbench from the published description of the benchmark.
 * Rates are bytes moved / best time over all passes except the first
 * (Copy/Scale move 16 bytes per element, Add/Triad 24; MB = 1e6 bytes).
 *
 * The kernels are vectorised as gcc vectorises STREAM's fixed-size static
 * arrays (see "the four kernels" below).  An earlier version looped over
 * three global pointers that might overlap: gcc -O2 left all four loops
 * scalar, and Triad came out 20 % below Add on a machine where both are
 * memory bound (they move the same 24 bytes per element).
 *
 * Usage: stream [-n ELEMENTS] [-p PASSES] [-P PROCESSES] [--start-at T [--slot S]] [--stamps]
 * With -P N > 1, N forked processes each allocate and first-touch their own
 * arrays, and every kernel of every pass starts in all of them at once (a
 * process-shared barrier).  The aggregate rate of a kernel is the bytes all
 * processes moved over one common interval, from the first process's start
 * to the last one's end, best pass after the first: what STREAM's threaded
 * form reports for its parallel loops.  Each process's own rate is reported
 * beside it.
 *
 * STREAM's rule wants each array to be at least 4 times the last-level
 * cache; the cache is read from sysfs (the sum of the distinct caches of the
 * highest level) and the JSON line says whether the rule holds.
 *
 * The JSON line also carries, per kernel, the common interval of every pass (earliest start,
 * latest end over the processes, CLOCK_MONOTONIC seconds; "spans") and the bytes all
 * processes move in one pass ("bytes_per_pass"): what a host running several instances of
 * this program at once needs to compute the same aggregate over all of them, once it has
 * mapped each instance's clock onto its own.  --stamps adds every process's own start and
 * end of every kernel of every pass ("stamps"), from which the aggregate above can be
 * recomputed.  --start-at T: every process, its arrays ready, waits until T on
 * CLOCK_MONOTONIC before the first pass ("late_s": how late the last one was ready or woke).
 * --slot S (with --start-at): kernel k of pass p starts at T + (4 p + k) S, as the barrier
 * starts it in every process: instances of this program on several machines, given one T
 * and S on their own clocks, run each kernel of each pass side by side ("slot_late_s": the
 * latest any kernel started after its slot, when one overran or a process woke late).
 *
 * Human-readable text goes to stderr; stdout carries exactly one JSON line.
 * Test hook: --corrupt-element I perturbs a[I] by one part in 1e12 after the
 * timed passes (in every process), so a test can prove validation catches it.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <emmintrin.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define SCALAR 3.0
#define DEFAULT_ELEMENTS 10000000L
#define DEFAULT_PASSES 20L
#define MAX_PASSES 200L /* values grow 15x per pass; 200 passes stay finite */
#define MAX_PROCESSES 1024L
#define REL_TOLERANCE 1e-13
#define CACHE_RULE_FACTOR 4

enum { K_COPY, K_SCALE, K_ADD, K_TRIAD, K_COUNT };
static const char *const KERNEL_NAMES[K_COUNT] = {"copy", "scale", "add", "triad"};
static const double BYTES_PER_ELEMENT[K_COUNT] = {16.0, 16.0, 24.0, 24.0};

/* What one process hands back (in memory shared with the parent when forked). */
struct result {
    double mb_s[K_COUNT];   /* this process's own rate: its bytes / its best pass */
    double best_s[K_COUNT];
    double late;      /* --start-at: how late its arrays were ready (0: on time) */
    double slot_late; /* --slot: the latest a kernel started after its slot */
    int32_t validated;
    int32_t ok; /* 1 if the run completed (allocation etc. succeeded) */
};

/* Start and end of every kernel of every pass of every process. */
struct stamp {
    double start, end;
};

static long corrupt_element = -1; /* --corrupt-element test hook */
static double start_at = 0.0;     /* --start-at T (0: start at once) */
static double slot = 0.0;         /* --slot S (0: no slots) */
static int print_stamps = 0;      /* --stamps */

static void usage(void)
{
    fprintf(stderr,
            "usage: stream [-n ELEMENTS] [-p PASSES] [-P PROCESSES] [--start-at T [--slot S]]\n"
            "              [--stamps]\n"
            "  -n ELEMENTS   doubles per array (default %ld; 3 arrays per process)\n"
            "  -p PASSES     timed passes, >= 2; the first is excluded (default %ld)\n"
            "  -P PROCESSES  concurrent processes, each kernel started in all at once\n"
            "                (default 1)\n"
            "  --start-at T  start the first pass at T s of CLOCK_MONOTONIC (within an hour)\n"
            "  --slot S      with --start-at: kernel k of pass p starts at T + (4 p + k) S\n"
            "  --stamps      print every process's start and end of every kernel and pass\n"
            "  --corrupt-element I  test hook: perturb a[I] before validation\n",
            DEFAULT_ELEMENTS, DEFAULT_PASSES);
}

/* -- the four kernels --------------------------------------------------------------
 * Written with SSE2 (part of every x86-64 CPU) two doubles at a time: the code gcc -O2
 * makes of STREAM's fixed-size static loops (movapd/mulpd/addpd), here independent of
 * the compiler's cost model, which at -O2 leaves loops over run-time sizes scalar.
 * Copy is memcpy, as gcc turns STREAM's Copy loop into.  The arrays are 64-byte aligned;
 * an odd element count ends in a scalar tail. */

static __attribute__((noinline)) void k_copy(double *restrict c, const double *restrict a, long n)
{
    memcpy(c, a, (size_t)n * sizeof(double));
}

static __attribute__((noinline)) void k_scale(double *restrict b, const double *restrict c,
                                              double q, long n)
{
    const __m128d vq = _mm_set1_pd(q);
    long m = n & ~1L;
    for (long j = 0; j < m; j += 2)
        _mm_store_pd(b + j, _mm_mul_pd(vq, _mm_load_pd(c + j)));
    for (long j = m; j < n; j++)
        b[j] = q * c[j];
}

static __attribute__((noinline)) void k_add(double *restrict c, const double *restrict a,
                                            const double *restrict b, long n)
{
    long m = n & ~1L;
    for (long j = 0; j < m; j += 2)
        _mm_store_pd(c + j, _mm_add_pd(_mm_load_pd(a + j), _mm_load_pd(b + j)));
    for (long j = m; j < n; j++)
        c[j] = a[j] + b[j];
}

static __attribute__((noinline)) void k_triad(double *restrict a, const double *restrict b,
                                              const double *restrict c, double q, long n)
{
    const __m128d vq = _mm_set1_pd(q);
    long m = n & ~1L;
    for (long j = 0; j < m; j += 2)
        _mm_store_pd(a + j, _mm_add_pd(_mm_load_pd(b + j), _mm_mul_pd(vq, _mm_load_pd(c + j))));
    for (long j = m; j < n; j++)
        a[j] = b[j] + q * c[j];
}

/* -- arrays ------------------------------------------------------------------------ */

struct arrays {
    double *a, *b, *c;
};

/* One allocation holding the three arrays back to back -- c, then b, then a, each starting
 * on a 32-byte boundary -- as gcc lays out the reference's static arrays a, b, c in memory.
 * Their distances then differ from a multiple of the page size as the reference's do (by
 * 1024 bytes at 10,000,000 elements): three separately allocated arrays each start at the
 * same offset into a page, where a load from one and a store to another at the same offset
 * look alike to the CPU's memory disambiguation ("4K aliasing"): that layout ran Scale at
 * 0.89 and Add at 0.95 of the reference here (medians of 30 interleaved pairs), this one
 * within a few per cent of it (bench/kernels.py). */
static int alloc_arrays(long n, struct arrays *v)
{
    size_t stride = ((size_t)n * sizeof(double) + 31) & ~(size_t)31;
    double *block = aligned_alloc(64, (3 * stride + 63) & ~(size_t)63);
    if (block == NULL)
        return -1;
    v->c = block;
    v->b = (double *)((char *)block + stride);
    v->a = (double *)((char *)block + 2 * stride);
    return 0;
}

/* Allocate and first-touch this process's arrays (STREAM's initial values). */
static int setup_arrays(long n, struct arrays *v)
{
    if (alloc_arrays(n, v) != 0) {
        fprintf(stderr, "stream: out of memory for 3 x %ld doubles\n", n);
        return -1;
    }
    for (long j = 0; j < n; j++) {
        v->a[j] = 1.0;
        v->b[j] = 2.0;
        v->c[j] = 0.0;
    }
    for (long j = 0; j < n; j++)
        v->a[j] = 2.0 * v->a[j];
    return 0;
}

/* Compare every element with the scalar replay of the same recurrence. */
static int validate(const struct arrays *v, long n, long passes)
{
    double ea = 1.0, eb = 2.0, ec = 0.0;
    ea = 2.0 * ea;
    for (long k = 0; k < passes; k++) {
        ec = ea;
        eb = SCALAR * ec;
        ec = ea + eb;
        ea = eb + SCALAR * ec;
    }
    const double *arr[3] = {v->a, v->b, v->c};
    const double expect[3] = {ea, eb, ec};
    const char *names[3] = {"a", "b", "c"};
    int good = 1;
    for (int m = 0; m < 3; m++) {
        long bad = 0, first_bad = -1;
        for (long j = 0; j < n; j++) {
            double err = fabs(arr[m][j] - expect[m]);
            if (!(err <= REL_TOLERANCE * fabs(expect[m]))) {
                if (bad++ == 0)
                    first_bad = j;
            }
        }
        if (bad != 0) {
            fprintf(stderr,
                    "stream: VALIDATION FAILED: array %s has %ld of %ld elements off "
                    "(first at %ld: %.17g, expected %.17g)\n",
                    names[m], bad, n, first_bad, arr[m][first_bad], expect[m]);
            good = 0;
        }
    }
    return good;
}

/* Timed passes; every kernel waits on `barrier` (NULL: a single process) first.
 * stamps[pass * K_COUNT + k] receives each kernel's start and end. */
static void run_passes(struct arrays *v, long n, long passes, pthread_barrier_t *barrier,
                       struct stamp *stamps, struct result *r)
{
    const double q = SCALAR;
    r->late = start_at > 0.0 ? wait_until(start_at) : 0.0;
    r->slot_late = 0.0;
    for (long pass = 0; pass < passes; pass++) {
        for (int k = 0; k < K_COUNT; k++) {
            double due = start_at + (double)(pass * K_COUNT + k) * slot;
            if (slot > 0.0 && (pass > 0 || k > 0))
                wait_until(due);
            if (barrier != NULL)
                pthread_barrier_wait(barrier);
            struct stamp *s = &stamps[pass * K_COUNT + k];
            double c0 = thread_seconds();
            s->start = mono_seconds();
            /* measured at the start itself: a late wake and a slow barrier both count */
            if (slot > 0.0 && s->start - due > r->slot_late)
                r->slot_late = s->start - due;
            switch (k) {
            case K_COPY:
                k_copy(v->c, v->a, n);
                break;
            case K_SCALE:
                k_scale(v->b, v->c, q, n);
                break;
            case K_ADD:
                k_add(v->c, v->a, v->b, n);
                break;
            default:
                k_triad(v->a, v->b, v->c, q, n);
                break;
            }
            inject_slowdown(c0);
            s->end = mono_seconds();
        }
    }
    for (int k = 0; k < K_COUNT; k++) {
        double best = INFINITY;
        for (long pass = 1; pass < passes; pass++) { /* the first pass is warm-up */
            const struct stamp *s = &stamps[pass * K_COUNT + k];
            if (s->end - s->start < best)
                best = s->end - s->start;
        }
        double dt = best > 0.0 ? best : 1e-9; /* coarse clock guard */
        r->best_s[k] = best;
        r->mb_s[k] = BYTES_PER_ELEMENT[k] * (double)n / dt / 1e6;
    }
    if (corrupt_element >= 0) {
        v->a[corrupt_element] *= 1.0 + 1e-12;
        fprintf(stderr, "stream: --corrupt-element: perturbed a[%ld]\n", corrupt_element);
    }
    r->validated = validate(v, n, passes);
    r->ok = 1;
}

/* The aggregate of `procs` processes: per kernel, the bytes all of them moved over the
 * common interval (earliest start to latest end), best pass after the first.  Pure. */
static void aggregate_rates(const struct stamp *stamps, long procs, long passes, long n,
                            double mb_s[K_COUNT], double best_s[K_COUNT])
{
    for (int k = 0; k < K_COUNT; k++) {
        double best = INFINITY;
        for (long pass = 1; pass < passes; pass++) {
            double start = INFINITY, end = -INFINITY;
            for (long q = 0; q < procs; q++) {
                const struct stamp *s = &stamps[(q * passes + pass) * K_COUNT + k];
                if (s->start < start)
                    start = s->start;
                if (s->end > end)
                    end = s->end;
            }
            if (end - start < best)
                best = end - start;
        }
        double dt = best > 0.0 ? best : 1e-9;
        best_s[k] = best;
        mb_s[k] = BYTES_PER_ELEMENT[k] * (double)n * (double)procs / dt / 1e6;
    }
}

/* -- the last-level cache -------------------------------------------------------- */

static long long read_cache_size(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    long long v = -1;
    char unit = 0;
    int got = fscanf(f, "%lld%c", &v, &unit);
    fclose(f);
    if (got < 1 || v < 0)
        return -1;
    if (unit == 'K')
        v *= 1024;
    else if (unit == 'M')
        v *= 1024 * 1024;
    return v;
}

static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    char *got = fgets(buf, (int)len, f);
    fclose(f);
    if (got == NULL)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* Total bytes of the distinct highest-level data/unified caches in sysfs; 0 if unknown. */
static long long last_level_cache_bytes(void)
{
    enum { MAX_CACHES = 512 };
    static char shared[MAX_CACHES][64];
    long long sizes[MAX_CACHES];
    int levels[MAX_CACHES], count = 0, top = 0;
    DIR *d = opendir("/sys/devices/system/cpu");
    if (d == NULL)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "cpu", 3) != 0 || e->d_name[3] < '0' || e->d_name[3] > '9')
            continue;
        for (int idx = 0; idx < 16; idx++) {
            char base[320], path[352], type[32], list[64], level[16];
            snprintf(base, sizeof base, "/sys/devices/system/cpu/%s/cache/index%d",
                     e->d_name, idx);
            snprintf(path, sizeof path, "%s/type", base);
            if (read_line(path, type, sizeof type) != 0)
                break;
            if (strcmp(type, "Instruction") == 0)
                continue;
            snprintf(path, sizeof path, "%s/level", base);
            if (read_line(path, level, sizeof level) != 0)
                continue;
            snprintf(path, sizeof path, "%s/shared_cpu_list", base);
            if (read_line(path, list, sizeof list) != 0)
                snprintf(list, sizeof list, "%.60s", e->d_name);
            snprintf(path, sizeof path, "%s/size", base);
            long long size = read_cache_size(path);
            int lv = atoi(level);
            if (size <= 0)
                continue;
            int seen = 0;
            for (int x = 0; x < count; x++)
                if (levels[x] == lv && strcmp(shared[x], list) == 0)
                    seen = 1;
            if (seen || count == MAX_CACHES)
                continue;
            snprintf(shared[count], sizeof shared[count], "%s", list);
            sizes[count] = size;
            levels[count] = lv;
            count++;
            if (lv > top)
                top = lv;
        }
    }
    closedir(d);
    long long total = 0;
    for (int x = 0; x < count; x++)
        if (levels[x] == top)
            total += sizes[x];
    return total;
}

/* -- processes -------------------------------------------------------------------- */

/* Run `procs` processes that share a barrier, their stamps and their results. */
static int run_forked(long n, long passes, long procs, struct stamp *stamps_out,
                      struct result *res_out)
{
    size_t stamps_bytes = (size_t)procs * passes * K_COUNT * sizeof(struct stamp);
    size_t bytes = sizeof(pthread_barrier_t) + stamps_bytes + (size_t)procs * sizeof(struct result);
    void *shm = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shm == MAP_FAILED) {
        perror("stream: mmap");
        return -1;
    }
    memset(shm, 0, bytes);
    pthread_barrier_t *barrier = shm;
    struct stamp *stamps = (struct stamp *)((char *)shm + sizeof(pthread_barrier_t));
    struct result *res = (struct result *)((char *)stamps + stamps_bytes);
    pthread_barrierattr_t attr;
    pthread_barrierattr_init(&attr);
    pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
    if (pthread_barrier_init(barrier, &attr, (unsigned)procs) != 0) {
        fprintf(stderr, "stream: cannot make a barrier for %ld processes\n", procs);
        munmap(shm, bytes);
        return -1;
    }

    pid_t *pids = calloc((size_t)procs, sizeof *pids);
    if (pids == NULL) {
        fprintf(stderr, "stream: out of memory\n");
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    long started = 0;
    int failed = 0;
    for (long q = 0; q < procs; q++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("stream: fork");
            failed = 1;
            break;
        }
        if (pid == 0) {
            struct arrays v;
            if (setup_arrays(n, &v) != 0)
                _exit(EXIT_INTERNAL); /* the parent stops the others */
            run_passes(&v, n, passes, barrier, &stamps[q * passes * K_COUNT], &res[q]);
            _exit(res[q].validated ? EXIT_OK : EXIT_VERIFY);
        }
        pids[q] = pid;
        started++;
    }
    if (failed)
        for (long q = 0; q < started; q++)
            kill(pids[q], SIGKILL); /* the barrier can never be met now */

    /* A process that dies leaves the others waiting on the barrier: stop them all. */
    for (long remaining = started; remaining > 0; remaining--) {
        int status;
        pid_t pid;
        while ((pid = waitpid(-1, &status, 0)) < 0)
            ;
        int bad = WIFSIGNALED(status) ||
                  (WIFEXITED(status) && WEXITSTATUS(status) != EXIT_OK &&
                   WEXITSTATUS(status) != EXIT_VERIFY);
        if (bad && !failed) {
            failed = 1;
            if (WIFSIGNALED(status))
                fprintf(stderr, "stream: a process was killed by signal %d\n", WTERMSIG(status));
            else
                fprintf(stderr, "stream: a process failed (exit %d)\n", WEXITSTATUS(status));
            for (long q = 0; q < started; q++)
                if (pids[q] != pid)
                    kill(pids[q], SIGKILL);
        }
    }
    for (long q = 0; q < procs && !failed; q++)
        if (!res[q].ok) {
            fprintf(stderr, "stream: process %ld reported no result\n", q);
            failed = 1;
        }
    if (!failed) {
        memcpy(stamps_out, stamps, stamps_bytes);
        memcpy(res_out, res, (size_t)procs * sizeof *res);
    }
    pthread_barrier_destroy(barrier);
    munmap(shm, bytes);
    free(pids);
    return failed ? -1 : 0;
}

/* -- output ----------------------------------------------------------------------- */

static void print_rates(const double mb_s[K_COUNT])
{
    for (int k = 0; k < K_COUNT; k++)
        printf("%s\"%s_mb_s\":%.3f", k ? "," : "", KERNEL_NAMES[k], mb_s[k]);
}

static void print_pair(const struct stamp *s)
{
    printf("[%.9f,%.9f]", s->start, s->end);
}

/* "spans":{"copy":[[start,end] per pass],...}: per kernel and pass, earliest start and latest
 * end over the processes; "bytes_per_pass":{...}: bytes all processes move in one pass. */
static void print_spans(const struct stamp *stamps, long procs, long passes, long n)
{
    printf("\"spans\":{");
    for (int k = 0; k < K_COUNT; k++) {
        printf("%s\"%s\":[", k ? "," : "", KERNEL_NAMES[k]);
        for (long pass = 0; pass < passes; pass++) {
            struct stamp env = {INFINITY, -INFINITY};
            for (long q = 0; q < procs; q++) {
                const struct stamp *s = &stamps[(q * passes + pass) * K_COUNT + k];
                if (s->start < env.start)
                    env.start = s->start;
                if (s->end > env.end)
                    env.end = s->end;
            }
            printf("%s", pass ? "," : "");
            print_pair(&env);
        }
        printf("]");
    }
    printf("},\"bytes_per_pass\":{");
    for (int k = 0; k < K_COUNT; k++)
        printf("%s\"%s\":%.0f", k ? "," : "", KERNEL_NAMES[k],
               BYTES_PER_ELEMENT[k] * (double)n * (double)procs);
    printf("},\"warmup_passes\":1,");
    if (!print_stamps)
        return;
    printf("\"stamps\":[");
    for (long q = 0; q < procs; q++) {
        printf("%s{", q ? "," : "");
        for (int k = 0; k < K_COUNT; k++) {
            printf("%s\"%s\":[", k ? "," : "", KERNEL_NAMES[k]);
            for (long pass = 0; pass < passes; pass++) {
                printf("%s", pass ? "," : "");
                print_pair(&stamps[(q * passes + pass) * K_COUNT + k]);
            }
            printf("]");
        }
        printf("}");
    }
    printf("],");
}

static void print_json(long n, long passes, long procs, int validated, long long llc,
                       const double agg[K_COUNT], const struct result *res,
                       const struct stamp *stamps)
{
    long long array_bytes = (long long)n * (long long)sizeof(double) * procs;
    printf("{\"kernel\":\"stream\",\"elements\":%ld,\"passes\":%ld,\"processes\":%ld,"
           "\"validated\":%s,\"timing\":\"%s\",\"array_bytes\":%lld,",
           n, passes, procs, validated ? "true" : "false",
           procs > 1 ? "common-interval" : "single-process", array_bytes);
    if (llc > 0)
        printf("\"llc_bytes\":%lld,\"cache_rule\":%s,", llc,
               array_bytes >= CACHE_RULE_FACTOR * llc ? "true" : "false");
    else
        printf("\"llc_bytes\":null,\"cache_rule\":null,");
    double late = 0.0, slot_late = 0.0;
    for (long q = 0; q < procs; q++) {
        if (res[q].late > late)
            late = res[q].late;
        if (res[q].slot_late > slot_late)
            slot_late = res[q].slot_late;
    }
    print_start_at(start_at, late);
    if (slot > 0.0)
        printf(",\"slot_s\":%.9f,\"slot_late_s\":%.9f,", slot, slot_late);
    else
        printf(",\"slot_s\":null,\"slot_late_s\":null,");
    print_spans(stamps, procs, passes, n);
    printf("\"aggregate\":{");
    print_rates(agg);
    printf("},\"per_process\":[");
    for (long q = 0; q < procs; q++) {
        printf("%s{", q ? "," : "");
        print_rates(res[q].mb_s);
        printf("}");
    }
    printf("]}\n");
}

int main(int argc, char **argv)
{
    long n = DEFAULT_ELEMENTS, passes = DEFAULT_PASSES, procs = 1;

    inject_fraction();                 /* read (and said) once, before any process forks */

    for (int ai = 1; ai < argc; ai++) {
        const char *opt = argv[ai];
        if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
            usage();
            return EXIT_OK;
        }
        if (strcmp(opt, "--stamps") == 0) {
            print_stamps = 1;
            continue;
        }
        if (strcmp(opt, "--start-at") == 0) {
            if (ai + 1 >= argc || parse_start_at(argv[ai + 1], &start_at) != 0) {
                fprintf(stderr, "stream: --start-at takes a CLOCK_MONOTONIC time in seconds "
                                "within %.0f s from now\n", START_AT_MAX_AHEAD);
                usage();
                return EXIT_USAGE;
            }
            ai++;
            continue;
        }
        if (strcmp(opt, "--slot") == 0) {
            if (ai + 1 >= argc || parse_pos_double(argv[ai + 1], 3600.0, &slot) != 0) {
                fprintf(stderr, "stream: --slot takes a number of seconds up to 3600\n");
                usage();
                return EXIT_USAGE;
            }
            ai++;
            continue;
        }
        long *dst = NULL, lo = 0, hi = 0;
        if (strcmp(opt, "-n") == 0) {
            dst = &n;
            lo = 1;
            hi = 1L << 36;
        } else if (strcmp(opt, "-p") == 0) {
            dst = &passes;
            lo = 2;
            hi = MAX_PASSES;
        } else if (strcmp(opt, "-P") == 0) {
            dst = &procs;
            lo = 1;
            hi = MAX_PROCESSES;
        } else if (strcmp(opt, "--corrupt-element") == 0) {
            dst = &corrupt_element;
            lo = 0;
            hi = LONG_MAX;
        }
        if (dst == NULL || ai + 1 >= argc || parse_long(argv[ai + 1], lo, hi, dst) != 0) {
            fprintf(stderr, "stream: bad or incomplete option '%s'%s%s\n", opt,
                    ai + 1 < argc ? " " : "", ai + 1 < argc ? argv[ai + 1] : "");
            if (dst != NULL)
                fprintf(stderr, "stream: %s takes an integer in [%ld, %ld]\n", opt, lo, hi);
            usage();
            return EXIT_USAGE;
        }
        ai++;
    }

    if (slot > 0.0 && start_at <= 0.0) {
        fprintf(stderr, "stream: --slot needs --start-at (the slots count from it)\n");
        usage();
        return EXIT_USAGE;
    }
    if (corrupt_element >= n) {
        fprintf(stderr, "stream: --corrupt-element %ld is beyond the %ld elements\n",
                corrupt_element, n);
        usage();
        return EXIT_USAGE;
    }

    long long llc = last_level_cache_bytes();
    fprintf(stderr,
            "stream: %ld elements x 3 arrays x 8 bytes = %.1f MB per process, "
            "%ld passes, %ld process(es)\n",
            n, 24.0 * (double)n / 1e6, passes, procs);
    if (llc > 0 && (long long)n * 8 * procs < CACHE_RULE_FACTOR * llc)
        fprintf(stderr,
                "stream: WARNING: an array (%.1f MB over all processes) is smaller than %d x "
                "the %.1f MB last-level cache; use at least %lld elements per process\n",
                8.0 * (double)n * (double)procs / 1e6, CACHE_RULE_FACTOR, (double)llc / 1e6,
                (CACHE_RULE_FACTOR * llc / 8 + procs - 1) / procs);

    struct result *res = calloc((size_t)procs, sizeof *res);
    struct stamp *stamps = calloc((size_t)procs * passes * K_COUNT, sizeof *stamps);
    if (res == NULL || stamps == NULL) {
        fprintf(stderr, "stream: out of memory\n");
        return EXIT_INTERNAL;
    }
    if (procs == 1) {
        struct arrays v;
        if (setup_arrays(n, &v) != 0)
            return EXIT_INTERNAL;
        run_passes(&v, n, passes, NULL, stamps, &res[0]);
    } else if (run_forked(n, passes, procs, stamps, res) != 0) {
        return EXIT_INTERNAL;
    }
    double agg[K_COUNT], agg_best[K_COUNT];
    aggregate_rates(stamps, procs, passes, n, agg, agg_best);

    int validated = 1;
    for (long q = 0; q < procs; q++) {
        validated &= res[q].validated != 0;
        fprintf(stderr, "stream: process %ld:", q);
        for (int k = 0; k < K_COUNT; k++)
            fprintf(stderr, " %s %.1f MB/s (best %.9f s)", KERNEL_NAMES[k],
                    res[q].mb_s[k], res[q].best_s[k]);
        fprintf(stderr, "%s\n", res[q].validated ? "" : " [VALIDATION FAILED]");
    }
    fprintf(stderr, "stream: aggregate:");
    for (int k = 0; k < K_COUNT; k++)
        fprintf(stderr, " %s %.1f MB/s (common best %.9f s)", KERNEL_NAMES[k], agg[k],
                agg_best[k]);
    fprintf(stderr, "\n");
    if (!validated)
        fprintf(stderr, "stream: VALIDATION FAILED: results do not match the expected values\n");

    print_json(n, passes, procs, validated, llc, agg, res, stamps);
    free(res);
    free(stamps);
    return validated ? EXIT_OK : EXIT_VERIFY;
}
