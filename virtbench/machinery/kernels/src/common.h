/* Small helpers shared by the virtbench kernels (timing, strict argument
 * parsing).  Header-only so every kernel stays a single translation unit. */
#ifndef VIRTBENCH_COMMON_H
#define VIRTBENCH_COMMON_H

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <time.h>

/* Exit codes of the output contract. */
#define EXIT_OK 0
#define EXIT_INTERNAL 1
#define EXIT_USAGE 2
#define EXIT_VERIFY 3

/* Seconds on CLOCK_MONOTONIC. */
static inline double mono_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Parse a whole string as a base-10 long in [lo, hi].  Returns 0 on success. */
static inline int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v;

    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Parse a whole string as a finite positive double (0 < v <= hi). */
static inline int parse_pos_double(const char *s, double hi, double *out)
{
    char *end;
    double v;

    if (s == NULL || *s == '\0')
        return -1;
    errno = 0;
    v = strtod(s, &end);
    if (errno != 0 || *end != '\0' || !(v > 0.0) || !(v <= hi))
        return -1;
    *out = v;
    return 0;
}

/* --start-at T: start the timed work at T seconds of CLOCK_MONOTONIC (a host that runs
 * several instances at once gives each the same moment, mapped onto its own clock), at most
 * this far ahead of now. */
#define START_AT_MAX_AHEAD 3600.0

/* Parse --start-at's value: a finite positive time no more than START_AT_MAX_AHEAD seconds
 * from now (a time in the past is accepted: the work starts at once, late).  0 on success. */
static inline int parse_start_at(const char *s, double *out)
{
    double v;
    if (parse_pos_double(s, 1e12, &v) != 0)
        return -1;
    if (v - mono_seconds() > START_AT_MAX_AHEAD)
        return -1;
    *out = v;
    return 0;
}

/* Sleep until `t` on CLOCK_MONOTONIC; returns how late we are then: how long after `t` we
 * were ready, or woke (a loaded host wakes a sleeper late). */
static inline double wait_until(double t)
{
    double now = mono_seconds();
    if (now >= t)
        return now - t;
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L)
        ts.tv_nsec = 999999999L;
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
    now = mono_seconds();
    return now > t ? now - t : 0.0;
}

/* Seconds of CPU time this thread has used. */
static inline double thread_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Test hook of bench/precision.py: VIRTBENCH_INJECT_SLOWDOWN=F (0 < F <= 1) makes each
 * measured section last about 1 + F times as long, a known slowdown to detect: once the
 * section's work is done, and before its end is stamped, the thread keeps its CPU busy for F
 * times the CPU time that work took (so a trial disturbed during the work is disturbed in
 * proportion).  Unset, or not a number in (0, 1]: nothing happens.  The kernel says so on
 * stderr when it is set. */
static inline double inject_fraction(void)
{
    static int known = 0;
    static double fraction = 0.0;
    if (!known) {
        double v;
        known = 1;
        if (parse_pos_double(getenv("VIRTBENCH_INJECT_SLOWDOWN"), 1.0, &v) == 0) {
            fraction = v;
            fprintf(stderr, "VIRTBENCH_INJECT_SLOWDOWN=%g: every measured section is made "
                    "%g %% longer (a test hook)\n", v, v * 100.0);
        }
    }
    return fraction;
}

/* End of a measured section that began when this thread's CPU time was `cpu0`. */
static inline void inject_slowdown(double cpu0)
{
    double f = inject_fraction();
    if (f <= 0.0)
        return;
    double now = thread_seconds();
    double until = now + f * (now - cpu0);
    volatile unsigned long spin = 0;
    while (thread_seconds() < until)
        spin++;
}

/* The JSON fields of --start-at: "start_at":T,"late_s":L (null, null without it). */
static inline void print_start_at(double start_at, double late)
{
    if (start_at > 0.0)
        printf("\"start_at\":%.9f,\"late_s\":%.9f", start_at, late);
    else
        printf("\"start_at\":null,\"late_s\":null");
}

#endif
