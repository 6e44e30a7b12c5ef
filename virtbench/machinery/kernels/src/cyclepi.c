/* cyclepi: the CNAF "PI test" (HEPiX 2009): a CPU-bound loop that computes pi and reports the
 * CPU cycles it took, counted with the time-stamp counter (rdtsc), next to wall time.
 * Run in several guests at once, the spread of cycles between guests shows how fairly the
 * hypervisor shares the CPUs.
 *
 * pi = integral over [0,1] of 4 / (1 + x^2) dx, by the midpoint rule with N steps.
 *
 *   cyclepi [-n STEPS] [--start-at T]     (default 2000000000)
 * stdout: one JSON line {"kernel":"cyclepi","steps":N,"cycles":C,"seconds":S,"pi":P,...};
 * start_s/end_s bound the loop on CLOCK_MONOTONIC; --start-at T starts it at T (within an hour)
 * exit 3 when the result is not pi to the accuracy N steps must give.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <x86intrin.h>

#include "common.h"

static void usage(void)
{
    fprintf(stderr, "usage: cyclepi [-n STEPS] [--start-at T]   (STEPS 1000..1e12, default "
                    "2000000000; T: CLOCK_MONOTONIC seconds, within an hour)\n");
}

int main(int argc, char **argv)
{
    long steps = 2000000000L;
    double start_at = 0.0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            if (parse_long(argv[++i], 1000, 1000000000000L, &steps) != 0) {
                usage();
                return EXIT_USAGE;
            }
        } else if (strcmp(argv[i], "--start-at") == 0 && i + 1 < argc) {
            if (parse_start_at(argv[++i], &start_at) != 0) {
                usage();
                return EXIT_USAGE;
            }
        } else {
            usage();
            return EXIT_USAGE;
        }
    }

    const double h = 1.0 / (double)steps;
    double sum = 0.0;
    double late = start_at > 0.0 ? wait_until(start_at) : 0.0;
    double t0 = mono_seconds();
    unsigned long long c0 = __rdtsc();
    for (long i = 0; i < steps; i++) {
        double x = ((double)i + 0.5) * h;
        sum += 4.0 / (1.0 + x * x);
    }
    unsigned long long c1 = __rdtsc();
    double t1 = mono_seconds();
    double pi = sum * h;
    double err = fabs(pi - 3.14159265358979323846);
    double seconds = t1 - t0;
    unsigned long long cycles = c1 - c0;
    /* the midpoint rule's error shrinks as 1/N^2; rounding of the sum adds about N * eps */
    double bound = 1.0 / ((double)steps * (double)steps) + (double)steps * 1e-16 + 1e-12;
    int ok = err <= bound;

    fprintf(stderr, "cyclepi: %ld steps, %llu cycles, %.6f s, pi=%.15f, error %.3e (bound %.3e)\n",
            steps, cycles, seconds, pi, err, bound);
    printf("{\"kernel\":\"cyclepi\",\"steps\":%ld,\"cycles\":%llu,\"seconds\":%.6f,"
           "\"start_s\":%.9f,\"end_s\":%.9f,", steps, cycles, seconds, t0, t1);
    print_start_at(start_at, late);
    printf(",\"pi\":%.15f,\"error\":%.3e,\"verified\":%s,\"tsc_ghz\":%.4f}\n",
           pi, err, ok ? "true" : "false", seconds > 0 ? (double)cycles / seconds / 1e9 : 0.0);
    return ok ? EXIT_OK : EXIT_VERIFY;
}
