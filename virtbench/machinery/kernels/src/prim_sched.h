/* primitives: context switches (two processes passing a token over pipes, lmbench's lat_ctx
 * with two processes of size 0) and futex wake-ups between two threads.  Header-only: part of
 * primitives.c's single translation unit. */
#ifndef VIRTBENCH_PRIM_SCHED_H
#define VIRTBENCH_PRIM_SCHED_H

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "prim_measure.h"

/* -- CPUs ------------------------------------------------------------------------------- */

struct cpus {
    int count;        /* CPUs this process may run on */
    int a, b;         /* the first two of them (b = -1 with only one) */
    cpu_set_t allowed;
};

static int allowed_cpus(struct cpus *c)
{
    CPU_ZERO(&c->allowed);
    if (sched_getaffinity(0, sizeof c->allowed, &c->allowed) != 0)
        return -1;
    c->count = CPU_COUNT(&c->allowed);
    c->a = c->b = -1;
    for (int i = 0; i < CPU_SETSIZE && c->b < 0; i++)
        if (CPU_ISSET(i, &c->allowed)) {
            if (c->a < 0)
                c->a = i;
            else
                c->b = i;
        }
    return c->a < 0 ? -1 : 0;
}

static int pin_to(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof one, &one);
}

static void unpin(const struct cpus *c)
{
    sched_setaffinity(0, sizeof c->allowed, &c->allowed);
}

/* -- a token over pipes between two processes ------------------------------------------- */

struct pingpong {
    pid_t child;
    int to_child, from_child;
};

/* Fork a child pinned to `cpu` that sends back every byte it reads, until its pipe closes (or
 * this process dies: PR_SET_PDEATHSIG).  0 once a first token has made the round trip. */
static int pingpong_start(struct pingpong *pp, int cpu)
{
    int down[2], up[2];
    if (pipe(down) != 0)
        return -1;
    if (pipe(up) != 0) {
        close(down[0]);
        close(down[1]);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(down[0]);
        close(down[1]);
        close(up[0]);
        close(up[1]);
        return -1;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        close(down[1]);
        close(up[0]);
        if (pin_to(cpu) != 0)
            _exit(EXIT_INTERNAL);
        char token;
        while (read(down[0], &token, 1) == 1)
            if (write(up[1], &token, 1) != 1)
                _exit(EXIT_INTERNAL);
        _exit(EXIT_OK);
    }
    close(down[0]);
    close(up[1]);
    pp->child = pid;
    pp->to_child = down[1];
    pp->from_child = up[0];
    char token = 'x';
    if (write(pp->to_child, &token, 1) != 1 || read(pp->from_child, &token, 1) != 1)
        return -1;
    return 0;
}

static void pingpong_stop(struct pingpong *pp)
{
    close(pp->to_child);
    close(pp->from_child);
    int status;
    while (waitpid(pp->child, &status, 0) < 0 && errno == EINTR)
        ;
}

/* n round trips of one byte: two hand-offs each (write, the other side wakes, reads). */
static double pingpong_loop(void *ctx, long n)
{
    struct pingpong *pp = ctx;
    char token = 'x';
    double t0 = mono_seconds();
    for (long i = 0; i < n; i++)
        if (write(pp->to_child, &token, 1) != 1 || read(pp->from_child, &token, 1) != 1)
            return -1.0;
    return mono_seconds() - t0;
}

/* lmbench's "overhead" of lat_ctx: one process writing a byte into its own pipe and reading it
 * back, no switch.  lmbench subtracts it from a hand-off; we report it beside (JSON). */
static double pipe_overhead_loop(void *ctx, long n)
{
    int *fds = ctx;
    char token = 'x';
    double t0 = mono_seconds();
    for (long i = 0; i < n; i++)
        if (write(fds[1], &token, 1) != 1 || read(fds[0], &token, 1) != 1)
            return -1.0;
    return mono_seconds() - t0;
}

/* -- futex wake-ups between two threads -------------------------------------------------- */

struct futex_pair {
    pthread_t thread;
    atomic_int turn;   /* 1: the partner's turn, 0: ours */
    atomic_int stop;
    int cpu;
    atomic_int ready;  /* 1: the partner pinned itself; -1: it could not */
    long slept, early; /* our waits that slept (woken) / found the turn already passed */
};

static long futex_call(atomic_int *addr, int op, int val)
{
    return syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

/* Sleep while *addr == val (FUTEX_WAIT returns at once when it no longer is). */
static void wait_while(atomic_int *addr, int val, long *slept, long *early)
{
    while (atomic_load(addr) == val) {
        if (futex_call(addr, FUTEX_WAIT_PRIVATE, val) == 0) {
            if (slept)
                (*slept)++;
        } else if (errno == EAGAIN && early) {
            (*early)++;
        }
    }
}

static void *futex_partner(void *arg)
{
    struct futex_pair *fp = arg;
    if (pin_to(fp->cpu) != 0) {
        atomic_store(&fp->ready, -1);
        return NULL;
    }
    atomic_store(&fp->ready, 1);
    for (;;) {
        wait_while(&fp->turn, 0, NULL, NULL);
        if (atomic_load(&fp->stop))
            return NULL;
        atomic_store(&fp->turn, 0);
        futex_call(&fp->turn, FUTEX_WAKE_PRIVATE, 1);
    }
}

static int futex_start(struct futex_pair *fp, int cpu)
{
    atomic_store(&fp->turn, 0);
    atomic_store(&fp->stop, 0);
    atomic_store(&fp->ready, 0);
    fp->cpu = cpu;
    fp->slept = fp->early = 0;
    if (pthread_create(&fp->thread, NULL, futex_partner, fp) != 0)
        return -1;
    while (atomic_load(&fp->ready) == 0)
        sched_yield();
    if (atomic_load(&fp->ready) < 0) {
        pthread_join(fp->thread, NULL);
        return -1;
    }
    return 0;
}

static void futex_stop(struct futex_pair *fp)
{
    atomic_store(&fp->stop, 1);
    atomic_store(&fp->turn, 1);
    futex_call(&fp->turn, FUTEX_WAKE_PRIVATE, 1);
    pthread_join(fp->thread, NULL);
}

/* n round trips: give the partner the turn and wake it, sleep until it gives the turn back
 * and wakes us.  Two wake-ups each. */
static double futex_loop(void *ctx, long n)
{
    struct futex_pair *fp = ctx;
    double t0 = mono_seconds();
    for (long i = 0; i < n; i++) {
        atomic_store(&fp->turn, 1);
        futex_call(&fp->turn, FUTEX_WAKE_PRIVATE, 1);
        wait_while(&fp->turn, 1, &fp->slept, &fp->early);
    }
    return mono_seconds() - t0;
}

#endif
