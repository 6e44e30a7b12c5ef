/*
 * himeno -- virtbench implementation of the Himeno benchmark
 * (Ryutaro Himeno, RIKEN): Jacobi iteration with a 19-point stencil for a
 * 3-D Poisson equation, single-precision arrays a[4], b[3], c[3], p, bnd,
 * wrk1, wrk2, relaxation factor omega = 0.8, counted as 34 floating-point
 * operations per interior grid point per iteration.
 *
 * Written for virtbench from the published description of the algorithm.
 *
 * Usage: himeno [-s XS|S|M|L] [-n ITERATIONS] [-t TARGET_SECONDS]
 * Human-readable progress goes to stderr; stdout carries exactly one JSON line.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define FLOPS_PER_POINT 34.0
#define OMEGA 0.8f
#define CALIBRATION_ITERATIONS 3
#define DEFAULT_TARGET_SECONDS 60.0

struct grid_size {
    const char *name;
    int imax, jmax, kmax;
};

static const struct grid_size SIZES[] = {
    {"XS", 33, 33, 65},
    {"S", 65, 65, 129},
    {"M", 129, 129, 257},
    {"L", 257, 257, 513},
};

/* All fields live on the same imax*jmax*kmax grid, k fastest. */
struct fields {
    int imax, jmax, kmax;
    float *a[4], *b[3], *c[3];
    float *p, *bnd, *wrk1, *wrk2;
};

static void usage(void)
{
    fprintf(stderr,
            "usage: himeno [-s XS|S|M|L] [-n ITERATIONS] [-t TARGET_SECONDS]\n"
            "  -s SIZE     grid size: XS 33x33x65, S 65x65x129, M 129x129x257 (default),\n"
            "              L 257x257x513\n"
            "  -n N        run exactly N Jacobi iterations (no calibration)\n"
            "  -t SECONDS  otherwise calibrate with %d iterations and size the measured\n"
            "              run to last about SECONDS (default %.0f)\n",
            CALIBRATION_ITERATIONS, DEFAULT_TARGET_SECONDS);
}

static float *alloc_field(size_t n)
{
    float *f = malloc(n * sizeof *f);
    if (f == NULL) {
        fprintf(stderr, "himeno: out of memory allocating %zu floats\n", n);
        exit(EXIT_INTERNAL);
    }
    return f;
}

static void fill(float *f, size_t n, float v)
{
    for (size_t x = 0; x < n; x++)
        f[x] = v;
}

/* Grid initialisation of the benchmark: a = (1,1,1,1/6), b = 0, c = 1,
 * bnd = 1, wrk1 = wrk2 = 0, p(i,j,k) = i^2 / (imax-1)^2. */
static void init_fields(struct fields *F, const struct grid_size *g)
{
    size_t n = (size_t)g->imax * g->jmax * g->kmax;

    F->imax = g->imax;
    F->jmax = g->jmax;
    F->kmax = g->kmax;
    for (int m = 0; m < 4; m++)
        F->a[m] = alloc_field(n);
    for (int m = 0; m < 3; m++) {
        F->b[m] = alloc_field(n);
        F->c[m] = alloc_field(n);
    }
    F->p = alloc_field(n);
    F->bnd = alloc_field(n);
    F->wrk1 = alloc_field(n);
    F->wrk2 = alloc_field(n);

    fill(F->a[0], n, 1.0f);
    fill(F->a[1], n, 1.0f);
    fill(F->a[2], n, 1.0f);
    fill(F->a[3], n, 1.0f / 6.0f);
    for (int m = 0; m < 3; m++) {
        fill(F->b[m], n, 0.0f);
        fill(F->c[m], n, 1.0f);
    }
    fill(F->bnd, n, 1.0f);
    fill(F->wrk1, n, 0.0f);
    fill(F->wrk2, n, 0.0f);

    size_t plane = (size_t)g->jmax * g->kmax;
    float denom = (float)((g->imax - 1) * (g->imax - 1));
    for (int i = 0; i < g->imax; i++)
        fill(F->p + (size_t)i * plane, plane, (float)(i * i) / denom);
}

static void free_fields(struct fields *F)
{
    for (int m = 0; m < 4; m++)
        free(F->a[m]);
    for (int m = 0; m < 3; m++) {
        free(F->b[m]);
        free(F->c[m]);
    }
    free(F->p);
    free(F->bnd);
    free(F->wrk1);
    free(F->wrk2);
}

/* One i-j row of interior points; returns this row's sum of squared residuals. */
static float sweep_row(size_t base, int kmax, size_t si, size_t sj,
                       const float *restrict a0, const float *restrict a1,
                       const float *restrict a2, const float *restrict a3,
                       const float *restrict b0, const float *restrict b1,
                       const float *restrict b2, const float *restrict c0,
                       const float *restrict c1, const float *restrict c2,
                       const float *restrict p, const float *restrict bnd,
                       const float *restrict wrk1, float *restrict wrk2)
{
    float g = 0.0f;

    for (int k = 1; k < kmax - 1; k++) {
        size_t x = base + (size_t)k;
        float s0 = a0[x] * p[x + si]
                 + a1[x] * p[x + sj]
                 + a2[x] * p[x + 1]
                 + b0[x] * (p[x + si + sj] - p[x + si - sj]
                            - p[x - si + sj] + p[x - si - sj])
                 + b1[x] * (p[x + sj + 1] - p[x - sj + 1]
                            - p[x + sj - 1] + p[x - sj - 1])
                 + b2[x] * (p[x + si + 1] - p[x - si + 1]
                            - p[x + si - 1] + p[x - si - 1])
                 + c0[x] * p[x - si]
                 + c1[x] * p[x - sj]
                 + c2[x] * p[x - 1]
                 + wrk1[x];
        float ss = (s0 * a3[x] - p[x]) * bnd[x];
        g += ss * ss;
        wrk2[x] = p[x] + OMEGA * ss;
    }
    return g;
}

/* nn Jacobi iterations; returns gosa (sum of squared residuals) of the last. */
static float jacobi(struct fields *F, long nn)
{
    const int imax = F->imax, jmax = F->jmax, kmax = F->kmax;
    const size_t sj = (size_t)kmax;
    const size_t si = (size_t)jmax * kmax;
    float gosa = 0.0f;

    for (long n = 0; n < nn; n++) {
        gosa = 0.0f;
        for (int i = 1; i < imax - 1; i++)
            for (int j = 1; j < jmax - 1; j++)
                gosa += sweep_row((size_t)i * si + (size_t)j * sj, kmax, si, sj,
                                  F->a[0], F->a[1], F->a[2], F->a[3],
                                  F->b[0], F->b[1], F->b[2],
                                  F->c[0], F->c[1], F->c[2],
                                  F->p, F->bnd, F->wrk1, F->wrk2);
        for (int i = 1; i < imax - 1; i++)
            for (int j = 1; j < jmax - 1; j++) {
                size_t x = (size_t)i * si + (size_t)j * sj + 1;
                memcpy(F->p + x, F->wrk2 + x, (size_t)(kmax - 2) * sizeof(float));
            }
    }
    return gosa;
}

static double mflops(const struct grid_size *g, long iterations, double seconds)
{
    double points = (double)(g->imax - 2) * (g->jmax - 2) * (g->kmax - 2);
    return FLOPS_PER_POINT * points * (double)iterations / seconds / 1e6;
}

int main(int argc, char **argv)
{
    const struct grid_size *g = &SIZES[2]; /* M */
    long fixed_iterations = 0;
    double target = DEFAULT_TARGET_SECONDS;

    for (int ai = 1; ai < argc; ai++) {
        const char *opt = argv[ai];
        if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
            usage();
            return EXIT_OK;
        }
        if (ai + 1 >= argc ||
            (strcmp(opt, "-s") != 0 && strcmp(opt, "-n") != 0 && strcmp(opt, "-t") != 0)) {
            fprintf(stderr, "himeno: bad or incomplete option '%s'\n", opt);
            usage();
            return EXIT_USAGE;
        }
        const char *val = argv[++ai];
        if (strcmp(opt, "-s") == 0) {
            g = NULL;
            for (size_t m = 0; m < sizeof SIZES / sizeof SIZES[0]; m++)
                if (strcmp(val, SIZES[m].name) == 0)
                    g = &SIZES[m];
            if (g == NULL) {
                fprintf(stderr, "himeno: unknown size '%s'\n", val);
                usage();
                return EXIT_USAGE;
            }
        } else if (strcmp(opt, "-n") == 0) {
            if (parse_long(val, 1, 100000000L, &fixed_iterations) != 0) {
                fprintf(stderr, "himeno: -n needs an integer >= 1, got '%s'\n", val);
                usage();
                return EXIT_USAGE;
            }
        } else {
            if (parse_pos_double(val, 1e7, &target) != 0) {
                fprintf(stderr, "himeno: -t needs a positive number of seconds, got '%s'\n", val);
                usage();
                return EXIT_USAGE;
            }
        }
    }

    struct fields F;
    init_fields(&F, g);
    fprintf(stderr, "himeno: grid %s %dx%dx%d (%.1f MiB in 14 float arrays)\n",
            g->name, g->imax, g->jmax, g->kmax,
            14.0 * g->imax * g->jmax * g->kmax * sizeof(float) / 1048576.0);

    long iterations = fixed_iterations;
    if (iterations == 0) {
        double t0 = mono_seconds();
        jacobi(&F, CALIBRATION_ITERATIONS);
        double cal = mono_seconds() - t0;
        double per_iter = cal / CALIBRATION_ITERATIONS;
        double want = per_iter > 0.0 ? target / per_iter : 1e8;
        iterations = want < 1.0 ? 1 : (want > 1e8 ? 100000000L : (long)want);
        fprintf(stderr,
                "himeno: calibration %d iterations in %.3f s (%.1f MFLOPS); "
                "running %ld iterations for ~%.1f s\n",
                CALIBRATION_ITERATIONS, cal, mflops(g, CALIBRATION_ITERATIONS, cal),
                iterations, target);
        /* Measure from the benchmark's initial state, like a fresh run. */
        free_fields(&F);
        init_fields(&F, g);
    } else {
        fprintf(stderr, "himeno: running %ld iterations\n", iterations);
    }

    double t0 = mono_seconds();
    float gosa = jacobi(&F, iterations);
    double seconds = mono_seconds() - t0;
    if (seconds <= 0.0)
        seconds = 1e-9; /* never divide by zero on a coarse clock */
    double rate = mflops(g, iterations, seconds);
    free_fields(&F);

    fprintf(stderr, "himeno: %ld iterations in %.6f s, gosa %.9e, %.3f MFLOPS\n",
            iterations, seconds, (double)gosa, rate);

    printf("{\"kernel\":\"himeno\",\"size\":\"%s\",\"grid\":[%d,%d,%d],"
           "\"iterations\":%ld,\"seconds\":%.6f,\"mflops\":%.3f,\"gosa\":",
           g->name, g->imax, g->jmax, g->kmax, iterations, seconds, rate);
    if (isfinite(gosa))
        printf("%.9e}\n", (double)gosa);
    else
        printf("null}\n");
    return EXIT_OK;
}
