/* Small helpers shared by the virtbench kernels (timing, strict argument
 * parsing).  Header-only so every kernel stays a single translation unit. */
#ifndef VIRTBENCH_COMMON_H
#define VIRTBENCH_COMMON_H

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
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

#endif
