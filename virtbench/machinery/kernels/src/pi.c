/*
 * pi -- virtbench pi kernel: Gauss-Legendre (Brent-Salamin AGM) iteration
 * with GMP mpf_t, verified against MPFR's mpfr_const_pi.
 *
 *   a0 = 1, b0 = 1/sqrt(2), t0 = 1/4, p0 = 1
 *   a' = (a+b)/2, b' = sqrt(a*b), t' = t - p*(a-a')^2, p' = 2p
 *   pi ~= (a+b)^2 / (4t)
 *
 * Usage: pi [-k K | -d DIGITS] [--corrupt-digit I]
 *   default k = 20: 2^20 = 1,048,576 decimal digits after the point.
 *
 * Verification: the first 50 fractional digits must equal the known
 * constant, and the FNV-1a 64-bit hash of all DIGITS fractional digit
 * characters must equal the same hash of MPFR's pi at the same precision.
 * --corrupt-digit I (1-based fractional digit index) changes digit I of our
 * result before verification, so tests can prove a wrong digit is caught.
 *
 * Only the AGM computation (not the decimal conversion or the MPFR
 * reference) is timed.  Human-readable text goes to stderr; stdout carries
 * exactly one JSON line.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gmp.h>
#include <mpfr.h>

#include "common.h"

#define DEFAULT_K 20
#define MIN_K 6
#define MAX_K 28
#define MIN_DIGITS 50L
#define MAX_DIGITS (1L << 28)
#define GUARD_BITS 128 /* extra working precision beyond DIGITS*log2(10) */
#define GUARD_DIGITS 24 /* digits converted beyond DIGITS, then truncated */

static const char PI_FIRST50[] = "14159265358979323846264338327950288419716939937510";

static void usage(void)
{
    fprintf(stderr,
            "usage: pi [-k K | -d DIGITS] [--start-at T] [--corrupt-digit I]\n"
            "  -k K               compute 2^K decimal digits, K in %d..%d (default %d)\n"
            "  -d DIGITS          compute DIGITS decimal digits (%ld..%ld)\n"
            "  --start-at T       start the timed computation at T s of CLOCK_MONOTONIC\n"
            "                     (within an hour)\n"
            "  --corrupt-digit I  change fractional digit I (1-based) before verifying\n"
            "                     (test hook: must make verification fail)\n",
            MIN_K, MAX_K, DEFAULT_K, MIN_DIGITS, MAX_DIGITS);
}

static uint64_t fnv1a64(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t x = 0; x < len; x++) {
        h ^= (unsigned char)s[x];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/*
 * Turn a digit string with decimal exponent (value = 0.DDDD * 10^exp, as
 * both mpf_get_str and mpfr_get_str return it) into exactly `digits`
 * fractional digits of pi.  Returns a malloc'd string or NULL on a format
 * surprise.
 */
static char *fraction_digits(const char *str, long exp, long digits, const char *who)
{
    if (exp != 1 || str[0] != '3') {
        fprintf(stderr, "pi: %s conversion gave unexpected leading digits/exponent (%.8s.., %ld)\n",
                who, str, exp);
        return NULL;
    }
    size_t have = strlen(str + 1);
    char *out = malloc((size_t)digits + 1);
    if (out == NULL)
        return NULL;
    size_t take = have < (size_t)digits ? have : (size_t)digits;
    memcpy(out, str + 1, take);
    /* get_str may drop trailing zeros; put them back. */
    memset(out + take, '0', (size_t)digits - take);
    out[digits] = '\0';
    return out;
}

/* Gauss-Legendre at `bits` precision.  Returns the iteration count. */
static int gauss_legendre(mpf_t pi, mp_bitcnt_t bits, int verbose)
{
    mpf_t a, b, t, an, d;
    mpf_init2(a, bits);
    mpf_init2(b, bits);
    mpf_init2(t, bits);
    mpf_init2(an, bits);
    mpf_init2(d, bits);

    mpf_set_ui(a, 1);
    mpf_set_ui(b, 2);
    mpf_sqrt(b, b);
    mpf_ui_div(b, 1, b);       /* b = 1/sqrt(2) */
    mpf_set_d(t, 0.25);
    mp_bitcnt_t pexp = 0;      /* p = 2^pexp */

    int iterations = 0;
    for (;;) {
        mpf_add(an, a, b);
        mpf_div_2exp(an, an, 1);      /* a' = (a+b)/2 */
        mpf_mul(b, a, b);
        mpf_sqrt(b, b);               /* b' = sqrt(a*b) */
        mpf_sub(d, a, an);
        mpf_mul(d, d, d);
        mpf_mul_2exp(d, d, pexp);
        mpf_sub(t, t, d);             /* t' = t - p*(a-a')^2 */
        pexp++;                       /* p' = 2p */
        mpf_swap(a, an);
        iterations++;

        /* The error of (a+b)^2/(4t) is about 2^(n+4) * (a-b)^2; stop once
         * that is below 2^-bits (or a and b agree to working precision). */
        mpf_sub(d, a, b);
        if (mpf_sgn(d) == 0)
            break;
        long e2;
        mpf_get_d_2exp(&e2, d);
        if (verbose)
            fprintf(stderr, "pi: iteration %d, |a-b| ~ 2^%ld\n", iterations, e2);
        if (2 * e2 + (long)iterations + 8 < -(long)bits)
            break;
        if (iterations > 64) {
            fprintf(stderr, "pi: AGM failed to converge\n");
            break;
        }
    }

    mpf_add(d, a, b);
    mpf_mul(d, d, d);
    mpf_mul_2exp(t, t, 2);
    mpf_div(pi, d, t);                /* pi = (a+b)^2 / (4t) */

    mpf_clear(a);
    mpf_clear(b);
    mpf_clear(t);
    mpf_clear(an);
    mpf_clear(d);
    return iterations;
}

int main(int argc, char **argv)
{
    long digits = 1L << DEFAULT_K;
    long corrupt = 0;
    int have_k = 0, have_d = 0;
    double start_at = 0.0;

    for (int ai = 1; ai < argc; ai++) {
        const char *opt = argv[ai];
        if (strcmp(opt, "-h") == 0 || strcmp(opt, "--help") == 0) {
            usage();
            return EXIT_OK;
        }
        const char *val = ai + 1 < argc ? argv[ai + 1] : NULL;
        long v;
        if (strcmp(opt, "-k") == 0 && !have_k && !have_d && parse_long(val, MIN_K, MAX_K, &v) == 0) {
            digits = 1L << v;
            have_k = 1;
        } else if (strcmp(opt, "-d") == 0 && !have_k && !have_d &&
                   parse_long(val, MIN_DIGITS, MAX_DIGITS, &v) == 0) {
            digits = v;
            have_d = 1;
        } else if (strcmp(opt, "--corrupt-digit") == 0 && corrupt == 0 &&
                   parse_long(val, 1, MAX_DIGITS, &v) == 0) {
            corrupt = v;
        } else if (strcmp(opt, "--start-at") == 0 && start_at == 0.0 &&
                   parse_start_at(val, &start_at) == 0) {
            /* parsed */
        } else {
            fprintf(stderr, "pi: bad, repeated or incomplete option '%s'%s%s\n", opt,
                    val ? " " : "", val ? val : "");
            usage();
            return EXIT_USAGE;
        }
        ai++;
    }
    if (corrupt > digits) {
        fprintf(stderr, "pi: --corrupt-digit %ld is beyond the %ld digits computed\n",
                corrupt, digits);
        usage();
        return EXIT_USAGE;
    }

    mp_bitcnt_t bits = (mp_bitcnt_t)ceil((double)digits * 3.321928094887362) + GUARD_BITS;
    fprintf(stderr, "pi: %ld decimal digits, %lu bits of working precision\n",
            digits, (unsigned long)bits);

    mpf_t pi;
    mpf_init2(pi, bits);
    double late = start_at > 0.0 ? wait_until(start_at) : 0.0;
    inject_fraction();                 /* read (and said) before the section */
    double c0 = thread_seconds();
    double t0 = mono_seconds();
    int iterations = gauss_legendre(pi, bits, 1);
    inject_slowdown(c0);
    double t1 = mono_seconds();
    double seconds = t1 - t0;
    fprintf(stderr, "pi: Gauss-Legendre: %d iterations in %.6f s\n", iterations, seconds);

    /* Decimal conversion (not timed). */
    mp_exp_t e;
    char *raw = mpf_get_str(NULL, &e, 10, (size_t)digits + GUARD_DIGITS, pi);
    char *ours = fraction_digits(raw, (long)e, digits, "GMP");
    free(raw); /* default GMP allocator is malloc */
    mpf_clear(pi);
    if (ours == NULL)
        return EXIT_INTERNAL;

    if (corrupt > 0) {
        char *c = &ours[corrupt - 1];
        char old = *c;
        *c = (char)('0' + (*c - '0' + 5) % 10);
        fprintf(stderr, "pi: --corrupt-digit: digit %ld changed from %c to %c\n",
                corrupt, old, *c);
    }
    uint64_t our_sum = fnv1a64(ours, (size_t)digits);

    /* Reference: MPFR's pi at the same precision, converted the same way. */
    double r0 = mono_seconds();
    mpfr_t ref;
    mpfr_init2(ref, (mpfr_prec_t)bits);
    mpfr_const_pi(ref, MPFR_RNDN);
    mpfr_exp_t re;
    char *rraw = mpfr_get_str(NULL, &re, 10, (size_t)digits + GUARD_DIGITS, ref, MPFR_RNDN);
    mpfr_clear(ref);
    if (rraw == NULL) {
        fprintf(stderr, "pi: mpfr_get_str failed\n");
        return EXIT_INTERNAL;
    }
    char *theirs = fraction_digits(rraw, (long)re, digits, "MPFR");
    mpfr_free_str(rraw);
    if (theirs == NULL)
        return EXIT_INTERNAL;
    uint64_t ref_sum = fnv1a64(theirs, (size_t)digits);
    fprintf(stderr, "pi: MPFR reference computed and converted in %.3f s\n", mono_seconds() - r0);

    int first_ok = strncmp(ours, PI_FIRST50, 50) == 0;
    int sum_ok = our_sum == ref_sum;
    int verified = first_ok && sum_ok;
    if (!first_ok)
        fprintf(stderr, "pi: VERIFICATION FAILED: first 50 digits differ from the known constant\n");
    if (!sum_ok) {
        long at = 0;
        while (at < digits && ours[at] == theirs[at])
            at++;
        fprintf(stderr,
                "pi: VERIFICATION FAILED: checksum %016llx != MPFR reference %016llx "
                "(first differing digit: %ld)\n",
                (unsigned long long)our_sum, (unsigned long long)ref_sum, at + 1);
    }
    if (verified)
        fprintf(stderr, "pi: verified %ld digits (first 50 and FNV-1a checksum %016llx)\n",
                digits, (unsigned long long)our_sum);

    printf("{\"kernel\":\"pi\",\"digits\":%ld,\"iterations\":%d,\"seconds\":%.6f,"
           "\"start_s\":%.9f,\"end_s\":%.9f,", digits, iterations, seconds, t0, t1);
    print_start_at(start_at, late);
    printf(",\"verified\":%s,\"checksum\":\"%016llx\",\"first50\":\"3.%.50s\"}\n",
           verified ? "true" : "false", (unsigned long long)our_sum, ours);
    free(ours);
    free(theirs);
    return verified ? EXIT_OK : EXIT_VERIFY;
}
