/*
 * stream -- virtbench implementation of the STREAM memory-bandwidth kernels
 * described by John D. McCalpin: Copy c=a, Scale b=q*c, Add c=a+b,
 * Triad a=b+q*c with q = 3.0 on three double arrays.
 *
 * Written for virtbench from the published description of the benchmark.
 * Rates are bytes moved / best time over all passes except the first
 * (Copy/Scale move 16 bytes per element, Add/Triad 24; MB = 1e6 bytes).
 *
 * Usage: stream [-n ELEMENTS] [-p PASSES] [-P PROCESSES]
 * With -P N > 1, N forked processes each allocate and first-touch their own
 * arrays, then wait on a common barrier so that their timed passes overlap.
 * Human-readable text goes to stderr; stdout carries exactly one JSON line.
 *
 * Test hook: --corrupt-element I perturbs a[I] by one part in 1e12 after the
 * timed passes (in every process), so a test can prove validation catches it.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

enum { K_COPY, K_SCALE, K_ADD, K_TRIAD, K_COUNT };
static const char *const KERNEL_NAMES[K_COUNT] = {"copy", "scale", "add", "triad"};
static const double BYTES_PER_ELEMENT[K_COUNT] = {16.0, 16.0, 24.0, 24.0};

/* Result one process hands back (through a pipe when forked). */
struct result {
    double mb_s[K_COUNT];
    double best_s[K_COUNT];
    int32_t validated;
    int32_t ok; /* 1 if the run completed (allocation etc. succeeded) */
};

/* Arrays are reached through globals so the compiler must assume the timer
 * calls between kernels can observe them and keeps every loop in place. */
static double *va, *vb, *vc;

static long corrupt_element = -1; /* --corrupt-element test hook */

static void usage(void)
{
    fprintf(stderr,
            "usage: stream [-n ELEMENTS] [-p PASSES] [-P PROCESSES]\n"
            "  -n ELEMENTS   doubles per array (default %ld; 3 arrays per process)\n"
            "  -p PASSES     timed passes, >= 2; the first is excluded (default %ld)\n"
            "  -P PROCESSES  concurrent processes started together (default 1)\n"
            "  --corrupt-element I  test hook: perturb a[I] before validation\n",
            DEFAULT_ELEMENTS, DEFAULT_PASSES);
}

static double *alloc_array(long n)
{
    size_t bytes = (size_t)n * sizeof(double);
    bytes = (bytes + 63) & ~(size_t)63;
    return aligned_alloc(64, bytes);
}

/* Allocate and first-touch this process's arrays (STREAM's initial values). */
static int setup_arrays(long n)
{
    va = alloc_array(n);
    vb = alloc_array(n);
    vc = alloc_array(n);
    if (va == NULL || vb == NULL || vc == NULL) {
        fprintf(stderr, "stream: out of memory for 3 x %ld doubles\n", n);
        return -1;
    }
    for (long j = 0; j < n; j++) {
        va[j] = 1.0;
        vb[j] = 2.0;
        vc[j] = 0.0;
    }
    for (long j = 0; j < n; j++)
        va[j] = 2.0 * va[j];
    return 0;
}

/* Compare every element with the scalar replay of the same recurrence. */
static int validate(long n, long passes)
{
    double ea = 1.0, eb = 2.0, ec = 0.0;
    ea = 2.0 * ea;
    for (long k = 0; k < passes; k++) {
        ec = ea;
        eb = SCALAR * ec;
        ec = ea + eb;
        ea = eb + SCALAR * ec;
    }
    const double *arr[3] = {va, vb, vc};
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

/* Timed passes on the already initialised arrays; fills *r. */
static void run_passes(long n, long passes, struct result *r)
{
    double best[K_COUNT];
    for (int k = 0; k < K_COUNT; k++)
        best[k] = INFINITY;

    for (long pass = 0; pass < passes; pass++) {
        double t[K_COUNT + 1];
        t[0] = mono_seconds();
        for (long j = 0; j < n; j++)
            vc[j] = va[j];
        t[1] = mono_seconds();
        for (long j = 0; j < n; j++)
            vb[j] = SCALAR * vc[j];
        t[2] = mono_seconds();
        for (long j = 0; j < n; j++)
            vc[j] = va[j] + vb[j];
        t[3] = mono_seconds();
        for (long j = 0; j < n; j++)
            va[j] = vb[j] + SCALAR * vc[j];
        t[4] = mono_seconds();
        if (pass == 0)
            continue; /* first pass is warm-up, as in STREAM */
        for (int k = 0; k < K_COUNT; k++) {
            double dt = t[k + 1] - t[k];
            if (dt < best[k])
                best[k] = dt;
        }
    }
    for (int k = 0; k < K_COUNT; k++) {
        double dt = best[k] > 0.0 ? best[k] : 1e-9; /* coarse clock guard */
        r->best_s[k] = best[k];
        r->mb_s[k] = BYTES_PER_ELEMENT[k] * (double)n / dt / 1e6;
    }
    if (corrupt_element >= 0) {
        va[corrupt_element] *= 1.0 + 1e-12;
        fprintf(stderr, "stream: --corrupt-element: perturbed a[%ld]\n", corrupt_element);
    }
    r->validated = validate(n, passes);
    r->ok = 1;
}

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* Reads exactly len bytes; returns 0, or -1 on error / early EOF. */
static int read_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t r = read(fd, p, len);
        if (r <= 0)
            return -1;
        p += r;
        len -= (size_t)r;
    }
    return 0;
}

static void print_json(long n, long passes, long procs, int validated,
                       const struct result *res)
{
    double agg[K_COUNT] = {0};
    for (long q = 0; q < procs; q++)
        for (int k = 0; k < K_COUNT; k++)
            agg[k] += res[q].mb_s[k];

    printf("{\"kernel\":\"stream\",\"elements\":%ld,\"passes\":%ld,\"processes\":%ld,"
           "\"validated\":%s,\"aggregate\":{",
           n, passes, procs, validated ? "true" : "false");
    for (int k = 0; k < K_COUNT; k++)
        printf("%s\"%s_mb_s\":%.3f", k ? "," : "", KERNEL_NAMES[k], agg[k]);
    printf("},\"per_process\":[");
    for (long q = 0; q < procs; q++) {
        printf("%s{", q ? "," : "");
        for (int k = 0; k < K_COUNT; k++)
            printf("%s\"%s_mb_s\":%.3f", k ? "," : "", KERNEL_NAMES[k], res[q].mb_s[k]);
        printf("}");
    }
    printf("]}\n");
}

/* Child body: set up, report ready, wait for the barrier, run, report. */
static int child_main(long n, long passes, int ready_w, int go_r, int result_w)
{
    struct result r;
    memset(&r, 0, sizeof r);
    if (setup_arrays(n) != 0) {
        close(ready_w); /* parent sees this child as failed at the barrier */
        write_all(result_w, &r, sizeof r);
        return EXIT_INTERNAL;
    }
    char byte = 'r';
    if (write_all(ready_w, &byte, 1) != 0)
        return EXIT_INTERNAL;
    close(ready_w);
    /* Barrier: the parent closes the write end once everyone is ready. */
    while (read(go_r, &byte, 1) > 0)
        ;
    close(go_r);
    run_passes(n, passes, &r);
    if (write_all(result_w, &r, sizeof r) != 0)
        return EXIT_INTERNAL;
    return r.validated ? EXIT_OK : EXIT_VERIFY;
}

static int run_forked(long n, long passes, long procs, struct result *res)
{
    int ready[2], go[2];
    if (pipe(ready) != 0 || pipe(go) != 0) {
        perror("stream: pipe");
        return -1;
    }
    int *result_fd = calloc((size_t)procs, sizeof *result_fd);
    pid_t *pids = calloc((size_t)procs, sizeof *pids);
    if (result_fd == NULL || pids == NULL) {
        fprintf(stderr, "stream: out of memory\n");
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    long started = 0;
    for (long q = 0; q < procs; q++) {
        int rp[2];
        if (pipe(rp) != 0) {
            perror("stream: pipe");
            break;
        }
        pid_t pid = fork();
        if (pid < 0) {
            perror("stream: fork");
            close(rp[0]);
            close(rp[1]);
            break;
        }
        if (pid == 0) {
            close(ready[0]);
            close(go[1]);
            close(rp[0]);
            for (long e = 0; e < q; e++)
                close(result_fd[e]);
            _exit(child_main(n, passes, ready[1], go[0], rp[1]));
        }
        close(rp[1]);
        result_fd[q] = rp[0];
        pids[q] = pid;
        started++;
    }
    close(ready[1]);
    close(go[0]);

    /* Wait until every child has allocated and touched its arrays. */
    long ready_count = 0;
    char byte;
    while (ready_count < started && read(ready[0], &byte, 1) == 1)
        ready_count++;
    close(ready[0]);
    int failed = started != procs || ready_count != started;
    if (failed) {
        fprintf(stderr, "stream: only %ld of %ld processes became ready\n",
                ready_count, procs);
        for (long q = 0; q < started; q++)
            kill(pids[q], SIGKILL);
    } else {
        fprintf(stderr, "stream: %ld processes ready, releasing barrier\n", procs);
    }
    close(go[1]); /* release the barrier */

    for (long q = 0; q < started; q++) {
        if (!failed && (read_all(result_fd[q], &res[q], sizeof res[q]) != 0 || !res[q].ok)) {
            fprintf(stderr, "stream: process %ld reported no result\n", q);
            failed = 1;
        }
        close(result_fd[q]);
        int status;
        while (waitpid(pids[q], &status, 0) < 0)
            ;
        if (!failed && WIFSIGNALED(status)) {
            fprintf(stderr, "stream: process %ld killed by signal %d\n", q, WTERMSIG(status));
            failed = 1;
        }
    }
    free(result_fd);
    free(pids);
    return failed ? -1 : 0;
}

int main(int argc, char **argv)
{
    long n = DEFAULT_ELEMENTS, passes = DEFAULT_PASSES, procs = 1;

    for (int ai = 1; ai < argc; ai++) {
        const char *opt = argv[ai];
        if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
            usage();
            return EXIT_OK;
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

    if (corrupt_element >= n) {
        fprintf(stderr, "stream: --corrupt-element %ld is beyond the %ld elements\n",
                corrupt_element, n);
        usage();
        return EXIT_USAGE;
    }

    fprintf(stderr,
            "stream: %ld elements x 3 arrays x 8 bytes = %.1f MB per process, "
            "%ld passes, %ld process(es)\n",
            n, 24.0 * (double)n / 1e6, passes, procs);

    struct result *res = calloc((size_t)procs, sizeof *res);
    if (res == NULL) {
        fprintf(stderr, "stream: out of memory\n");
        return EXIT_INTERNAL;
    }
    if (procs == 1) {
        if (setup_arrays(n) != 0)
            return EXIT_INTERNAL;
        run_passes(n, passes, &res[0]);
    } else if (run_forked(n, passes, procs, res) != 0) {
        return EXIT_INTERNAL;
    }

    int validated = 1;
    for (long q = 0; q < procs; q++) {
        validated &= res[q].validated != 0;
        fprintf(stderr, "stream: process %ld:", q);
        for (int k = 0; k < K_COUNT; k++)
            fprintf(stderr, " %s %.1f MB/s (best %.9f s)", KERNEL_NAMES[k],
                    res[q].mb_s[k], res[q].best_s[k]);
        fprintf(stderr, "%s\n", res[q].validated ? "" : " [VALIDATION FAILED]");
    }
    if (!validated)
        fprintf(stderr, "stream: VALIDATION FAILED: results do not match the expected values\n");

    print_json(n, passes, procs, validated, res);
    free(res);
    return validated ? EXIT_OK : EXIT_VERIFY;
}
