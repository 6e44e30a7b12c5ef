/* primitives: the calibrated loop every metric is measured with, and the statistics the kernel
 * reports (median, nearest-rank percentile).  Header-only: part of primitives.c's single
 * translation unit.
 *
 * The method is lmbench's and pyperf's: a loop of n operations is timed as a whole (one clock
 * read before, one after, so the clock's own cost and granularity vanish into n); n starts
 * small and grows until one loop lasts at least the target time; then the loop of that n is
 * timed `repeats` times and the metric is the median loop time divided by n.  The calibration
 * loops are the warm-up.  Each operation's loop body is the operation and nothing else it
 * can avoid (the loop's own increment and branch stay, a cycle or two). */
#ifndef VIRTBENCH_PRIM_MEASURE_H
#define VIRTBENCH_PRIM_MEASURE_H

#include <math.h>
#include <string.h>
#include <sys/resource.h>

#include "common.h"

#define MAX_REPEATS 50
#define GROWTH_MAX 10.0

/* Time `n` operations; returns the seconds the timed part took, or a negative number when the
 * operation failed (errno set; the caller says what failed). */
typedef double (*loop_fn)(void *ctx, long n);

struct measurement {
    int done;                  /* 1 when measured */
    double value;              /* the metric: median loop time / (n * divisor), in `scale` units */
    long ops;                  /* n: operations per timed loop */
    int runs;                  /* timed loops of n (after calibration) */
    double run_s[MAX_REPEATS]; /* their times */
    int short_loop;            /* 1 when n hit its cap before a loop lasted the target */
    double calibrated_s;       /* the calibration loop of n that lasted the target */
};

/* The run's settings (from the command line). */
static double target_s = 0.01; /* each timed loop lasts at least this long */
static int repeats = 5;        /* timed loops per metric, after calibration */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of xs[0..n) (the mean of the middle two for even n); xs is left unchanged. */
static double median_of(const double *xs, int n)
{
    double tmp[MAX_REPEATS];
    if (n <= 0 || n > MAX_REPEATS)
        return NAN;
    memcpy(tmp, xs, (size_t)n * sizeof *xs);
    qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
    return n % 2 ? tmp[n / 2] : 0.5 * (tmp[n / 2 - 1] + tmp[n / 2]);
}

/* The p-th percentile of sorted[0..n) by nearest rank: the smallest value with at least p % of
 * the values at or below it, sorted[ceil(p/100 * n) - 1]. */
static double nearest_rank(const double *sorted, long n, double p)
{
    if (n <= 0)
        return NAN;
    long rank = (long)ceil(p / 100.0 * (double)n - 1e-9);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

/*
 * Calibrate n (from `start`, at most `cap`) until one loop lasts target_s, then time `repeats`
 * loops of n.  The metric is median loop time / (n * divisor) * scale: divisor counts what one
 * operation holds (a round trip is two hand-offs), scale the unit (1e9: ns).  Returns 0, or -1
 * when the loop failed (m->done stays 0).
 */
static int measure(loop_fn fn, void *ctx, long start, long cap, double divisor, double scale,
                   struct measurement *m)
{
    memset(m, 0, sizeof *m);
    long n = start < 1 ? 1 : start;
    for (;;) {
        double t = fn(ctx, n);
        if (t < 0.0)
            return -1;
        m->calibrated_s = t;
        if (t >= target_s)
            break;
        if (n >= cap) {
            m->short_loop = 1;
            break;
        }
        double grow = t > 0.0 ? 1.3 * target_s / t : GROWTH_MAX;
        if (grow < 2.0)
            grow = 2.0;
        if (grow > GROWTH_MAX)
            grow = GROWTH_MAX;
        double next = (double)n * grow;
        n = next >= (double)cap ? cap : (long)next;
    }
    m->ops = n;
    m->runs = repeats;
    for (int r = 0; r < repeats; r++) {
        double t = fn(ctx, n);
        if (t < 0.0)
            return -1;
        m->run_s[r] = t;
    }
    m->value = median_of(m->run_s, m->runs) / ((double)n * divisor) * scale;
    m->done = 1;
    return 0;
}

/* Minor page faults this process has taken so far (getrusage). */
static long minor_faults(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1;
    return ru.ru_minflt;
}

#endif
