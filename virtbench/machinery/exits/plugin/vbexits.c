/*
 * vbexits: virtbench's QEMU TCG plugin counting *would-be exits*: every port I/O
 * instruction and every MMIO access to an emulated device, by guest PC and device.
 *
 * Written for the QEMU plugin API version 1 (QEMU 4.2 .. 8.1). Debian's QEMU ships no
 * qemu-plugin.h, so the few API functions used here are declared below from the API's
 * documentation (include/qemu/qemu-plugin.h at version 1).
 *
 *  - MMIO: a memory callback on every load/store of kernel-half code; an access whose
 *    hwaddr is I/O counts for (PC, device name).
 *  - Port I/O: IN/OUT/INS/OUTS are found at translation time (prefixes 66/67/F2/F3/
 *    segment/lock and REX skipped; E4-E7 imm8, EC-EF via DX, 6C-6F string forms) and
 *    every execution counts for (PC, "port 0xNN" or "port dx").
 *  - Callers: a per-vCPU ring of the last RING_DEPTH executed kernel TB start PCs. An
 *    event keeps the newest CALLER_DEPTH of them that do not start in the NEAR bytes up to
 *    its own PC (the TBs of a small accessor itself, so the snapshots vary little),
 *    up to MAX_RINGS distinct snapshots per site with counts; the host then finds the first
 *    function outside a generic accessor (iowrite16 -> vp_notify).
 *  - Cost: a memory callback on every load/store is what makes profiling slow, so none
 *    is given where an instruction cannot reach MMIO (decoded), and instructions seen
 *    LEARN_RAM times touching RAM only lose theirs at the next "settle" (a plugin reset,
 *    after which QEMU retranslates). Port I/O and the TB ring are cheap.
 *  - Control: plugin arg control=SOCKET (a Unix socket the plugin listens on). Command
 *    "dump PATH\n" writes the cumulative counts to PATH.tmp, renames it to PATH and
 *    answers "ok\n" (or "error ...\n"); "settle\n" drops the learned callbacks.
 *    Arg out=PATH: dump there at exit too. Arg learn=off: never drop callbacks.
 *    Arg autosettle=S: settle every S s while more instructions become learnable.
 *    Arg all=on: instrument user-space code too (default: kernel half only).
 *    Args callers=off (no TB ring) and mmio=off (port I/O only) make it cheaper.
 *
 * Dump format (text, one record a line):
 *   vbexits 1 depth=<CALLER_DEPTH>
 *   site <pio|mmio> 0x<pc> <count> <device...>
 *   ring <count> 0x<tb0> 0x<tb1> ...        (newest first, far TBs only; 0 = none)
 *   ring-other <count>                      (events whose snapshot did not fit)
 *   stats translations=N mem_callbacks=N settles=N learned=N
 *   end <sites>
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "x86decode.h"

/* ---- the QEMU plugin API, version 1 (only what we use) ------------------------------ */
typedef uint64_t qemu_plugin_id_t;
typedef uint32_t qemu_plugin_meminfo_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_hwaddr;

typedef struct {
    const char *target_name;
    struct { int min; int cur; } version;
    bool system_emulation;
    union { struct { int smp_vcpus; int max_vcpus; } system; };
} qemu_info_t;

enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS,
                            QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_mem_rw { QEMU_PLUGIN_MEM_R = 1, QEMU_PLUGIN_MEM_W, QEMU_PLUGIN_MEM_RW };

typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_mem_cb_t)(unsigned int vcpu_index, qemu_plugin_meminfo_t info,
                                          uint64_t vaddr, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
                                           qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
                                          qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
                                            qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
                                      qemu_plugin_vcpu_mem_cb_t cb,
                                      enum qemu_plugin_cb_flags flags,
                                      enum qemu_plugin_mem_rw rw, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb,
                                    void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);   /* v1: a pointer */
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t info, uint64_t vaddr);
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *haddr);
const char *qemu_plugin_hwaddr_device_name(const struct qemu_plugin_hwaddr *h);
void qemu_plugin_outs(const char *string);
typedef void (*qemu_plugin_simple_cb_t)(qemu_plugin_id_t id);
void qemu_plugin_reset(qemu_plugin_id_t id, qemu_plugin_simple_cb_t cb);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* ---- state -------------------------------------------------------------------------- */
#define RING_DEPTH 8          /* TB start PCs kept per vCPU */
#define CALLER_DEPTH 4        /* far TB start PCs kept per event */
#define NEAR 0x100            /* TBs starting this little before the event's PC: its own */
#define MAX_RINGS 1024        /* distinct ring snapshots kept per site (grown on demand) */
#define MAX_VCPUS 64
#define NBUCKETS 4096
#define KERNEL_HALF 0xffff800000000000ULL

enum { KIND_PIO = 0, KIND_MMIO = 1 };
static const char *const KIND_NAME[] = { "pio", "mmio" };

struct vring {                 /* written by its own vCPU thread only */
    uint64_t pc[RING_DEPTH];
    unsigned pos;
} __attribute__((aligned(64)));

struct ringrec { uint64_t pc[CALLER_DEPTH]; uint64_t count; };

struct site {
    uint64_t pc;
    const char *dev;           /* interned: compared by pointer */
    int kind;
    uint64_t count;
    unsigned nrings, cap;
    uint64_t ring_other;
    struct ringrec *rings;     /* the most used drift to the front */
    struct site *next;
};

struct pio_insn {              /* userdata of a port I/O instruction's exec callback */
    uint64_t pc;
    const char *dev;
    struct pio_insn *next;
};

static struct vring rings[MAX_VCPUS];
static struct site *sites[NBUCKETS];
static unsigned nsites;
static struct pio_insn *pio_insns[NBUCKETS];

/* Learning: a memory instruction seen LEARN_RAM times touching RAM only (and no MMIO) is
 * translated without a memory callback after the next settle (a plugin reset: QEMU
 * flushes its translations). String instructions too: under TCG a REP MOVS/STOS calls
 * back once per element, which makes clear_page and copy_user the costliest code of all
 * (memcpy_toio's own REP MOVS only ever touches MMIO, so it keeps its callback; a
 * memset_io, which is memset on x86, after memset was learned is missed). */
#define LEARN_RAM 64
struct mem_insn {
    uint64_t pc;
    uint32_t ram;              /* RAM accesses seen (saturating; racy by design) */
    uint8_t io;                /* ever touched MMIO */
    struct mem_insn *next;
};
static struct mem_insn *mem_insns[NBUCKETS * 4];
static uint64_t learned;       /* instructions dropped at the last settle */
static uint64_t settles, translations, mem_callbacks_registered;
static bool reset_pending;
static int settle_requested;   /* set by the control thread, taken by a vCPU thread */
static pthread_cond_t settled_cond = PTHREAD_COND_INITIALIZER;
static uint64_t settles_done;
static bool no_learn;          /* learn=off: every memory instruction keeps its callback */
static qemu_plugin_id_t plugin_id;
static const char *port_names[256];
static const char *port_dx = "port dx";
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool all_code;
static bool no_callers;        /* callers=off: no TB ring (cheaper; no caller for accessors) */
static bool no_mmio;           /* mmio=off: port I/O only (cheaper) */
static char *control_path;
static char *out_path;

static unsigned bucket(uint64_t pc) { return (unsigned)((pc ^ (pc >> 12)) % NBUCKETS); }

static void snapshot_ring(unsigned vcpu, uint64_t pc, uint64_t *dest)
{
    memset(dest, 0, sizeof(uint64_t) * CALLER_DEPTH);
    if (vcpu >= MAX_VCPUS)
        return;
    struct vring *r = &rings[vcpu];
    unsigned n = 0;
    for (unsigned i = 0; i < RING_DEPTH && n < CALLER_DEPTH; i++) {
        uint64_t tb = r->pc[(r->pos + RING_DEPTH - 1 - i) % RING_DEPTH];
        if (tb && (tb + NEAR < pc || tb > pc))
            dest[n++] = tb;
    }
}

static void record(int kind, uint64_t pc, const char *dev, unsigned vcpu)
{
    uint64_t snap[CALLER_DEPTH];
    snapshot_ring(vcpu, pc, snap);
    pthread_mutex_lock(&lock);
    unsigned b = bucket(pc);
    struct site *s = sites[b];
    while (s && !(s->pc == pc && s->dev == dev && s->kind == kind))
        s = s->next;
    if (!s) {
        s = calloc(1, sizeof(*s));
        if (!s) {
            pthread_mutex_unlock(&lock);
            return;
        }
        s->pc = pc;
        s->dev = dev;
        s->kind = kind;
        s->next = sites[b];
        sites[b] = s;
        nsites++;
    }
    s->count++;
    unsigned i;
    for (i = 0; i < s->nrings; i++) {
        if (memcmp(s->rings[i].pc, snap, sizeof(snap)) == 0) {
            s->rings[i].count++;
            if (i > 0 && s->rings[i].count > s->rings[i - 1].count) {
                struct ringrec t = s->rings[i - 1];
                s->rings[i - 1] = s->rings[i];
                s->rings[i] = t;
            }
            break;
        }
    }
    if (i == s->nrings) {
        if (s->nrings == s->cap && s->cap < MAX_RINGS) {
            unsigned cap = s->cap ? s->cap * 2 : 8;
            struct ringrec *r = realloc(s->rings, cap * sizeof(*r));
            if (r) {
                s->rings = r;
                s->cap = cap;
            }
        }
        if (s->nrings < s->cap) {
            memcpy(s->rings[i].pc, snap, sizeof(snap));
            s->rings[i].count = 1;
            s->nrings++;
        } else {
            s->ring_other++;
        }
    }
    pthread_mutex_unlock(&lock);
}

/* ---- callbacks ---------------------------------------------------------------------- */
static void take_settle_request(void);

static void tb_exec(unsigned int vcpu, void *udata)
{
    take_settle_request();
    if (vcpu < MAX_VCPUS) {
        struct vring *r = &rings[vcpu];
        r->pc[r->pos] = (uint64_t)(uintptr_t)udata;
        r->pos = (r->pos + 1) % RING_DEPTH;
    }
}

static void pio_exec(unsigned int vcpu, void *udata)
{
    struct pio_insn *p = udata;
    record(KIND_PIO, p->pc, p->dev, vcpu);
}

static void mem_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr,
                       void *udata)
{
    struct mem_insn *mi = udata;
    take_settle_request();
    struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
    if (!hw || !qemu_plugin_hwaddr_is_io(hw)) {
        if (mi->ram < LEARN_RAM)
            mi->ram++;
        return;
    }
    mi->io = 1;
    const char *dev = qemu_plugin_hwaddr_device_name(hw);   /* interned by QEMU */
    record(KIND_MMIO, mi->pc, dev ? dev : "?", vcpu);
}

static struct mem_insn *mem_insn_for(uint64_t pc)
{
    unsigned b = (unsigned)((pc ^ (pc >> 12)) % (NBUCKETS * 4));
    pthread_mutex_lock(&lock);
    struct mem_insn *m = mem_insns[b];
    while (m && m->pc != pc)
        m = m->next;
    if (!m && (m = calloc(1, sizeof(*m)))) {
        m->pc = pc;
        m->next = mem_insns[b];
        mem_insns[b] = m;
    }
    pthread_mutex_unlock(&lock);
    return m;
}

static struct pio_insn *pio_insn_for(uint64_t pc, int port)
{
    const char *dev = port == 256 ? port_dx : port_names[port];
    unsigned b = bucket(pc);
    pthread_mutex_lock(&lock);
    struct pio_insn *p = pio_insns[b];
    while (p && !(p->pc == pc && p->dev == dev))
        p = p->next;
    if (!p && (p = calloc(1, sizeof(*p)))) {
        p->pc = pc;
        p->dev = dev;
        p->next = pio_insns[b];
        pio_insns[b] = p;
    }
    pthread_mutex_unlock(&lock);
    return p;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    uint64_t start = qemu_plugin_tb_vaddr(tb);
    __atomic_fetch_add(&translations, 1, __ATOMIC_RELAXED);
    take_settle_request();
    bool instrument = all_code || start >= KERNEL_HALF;
    if (instrument && !no_callers)
        qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
                                             (void *)(uintptr_t)start);
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t pc = qemu_plugin_insn_vaddr(insn);
        const uint8_t *data = qemu_plugin_insn_data(insn);
        size_t size = qemu_plugin_insn_size(insn);
        int port = pio_port(data, size);
        if (port >= 0) {
            struct pio_insn *p = pio_insn_for(pc, port);
            if (p)
                qemu_plugin_register_vcpu_insn_exec_cb(insn, pio_exec, QEMU_PLUGIN_CB_NO_REGS, p);
        } else if (instrument && !no_mmio && !never_mmio(data, size)) {
            struct mem_insn *mi = mem_insn_for(pc);
            if (!mi)
                continue;
            if (settles && !no_learn && mi->ram >= LEARN_RAM && !mi->io)
                continue;                       /* learned: RAM only */
            __atomic_fetch_add(&mem_callbacks_registered, 1, __ATOMIC_RELAXED);
            qemu_plugin_register_vcpu_mem_cb(insn, mem_access, QEMU_PLUGIN_CB_NO_REGS,
                                             QEMU_PLUGIN_MEM_RW, mi);
        }
    }
}

/* ---- dumps and control -------------------------------------------------------------- */
static int dump(const char *path, char *err, size_t errlen)
{
    size_t len = strlen(path);
    char *tmp = malloc(len + 5);
    if (!tmp) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(tmp, path, len);
    memcpy(tmp + len, ".tmp", 5);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    pthread_mutex_lock(&lock);
    fprintf(f, "vbexits 1 depth=%d\n", CALLER_DEPTH);
    for (unsigned b = 0; b < NBUCKETS; b++) {
        for (struct site *s = sites[b]; s; s = s->next) {
            fprintf(f, "site %s 0x%" PRIx64 " %" PRIu64 " %s\n", KIND_NAME[s->kind], s->pc,
                    s->count, s->dev);
            for (unsigned i = 0; i < s->nrings; i++) {
                fprintf(f, "ring %" PRIu64, s->rings[i].count);
                for (unsigned j = 0; j < CALLER_DEPTH; j++)
                    fprintf(f, " 0x%" PRIx64, s->rings[i].pc[j]);
                fputc('\n', f);
            }
            if (s->ring_other)
                fprintf(f, "ring-other %" PRIu64 "\n", s->ring_other);
        }
    }
    fprintf(f, "stats translations=%" PRIu64 " mem_callbacks=%" PRIu64 " settles=%" PRIu64
            " learned=%" PRIu64 "\n", translations, mem_callbacks_registered, settles, learned);
    fprintf(f, "end %u\n", nsites);
    pthread_mutex_unlock(&lock);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        snprintf(err, errlen, "writing %s failed", tmp);
        unlink(tmp);
        free(tmp);
        return -1;
    }
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "rename %s: %s", tmp, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}

static void at_exit(qemu_plugin_id_t id, void *udata);

static void after_reset(qemu_plugin_id_t id)
{
    /* a reset unregistered everything and QEMU flushed its translations: register again */
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    pthread_mutex_lock(&lock);
    reset_pending = false;
    settles_done++;
    pthread_cond_broadcast(&settled_cond);
    pthread_mutex_unlock(&lock);
}

/*
 * QEMU flushes its translations on a reset only when asked from a vCPU thread (from any
 * other thread it just swaps the callbacks), so the control thread asks, and the next
 * callback on a vCPU (a TB, a translation, a memory access) does it.
 */
static void take_settle_request(void)
{
    if (__builtin_expect(__atomic_load_n(&settle_requested, __ATOMIC_RELAXED), 0) &&
        __atomic_exchange_n(&settle_requested, 0, __ATOMIC_ACQ_REL))
        qemu_plugin_reset(plugin_id, after_reset);
}

/* Count what the next translations will leave out, have QEMU retranslate everything and
 * wait (up to 5 s) until it has. */
static int settle(char *err, size_t errlen)
{
    uint64_t n = 0;
    pthread_mutex_lock(&lock);
    if (no_learn) {
        pthread_mutex_unlock(&lock);
        return 0;
    }
    if (reset_pending) {
        pthread_mutex_unlock(&lock);
        snprintf(err, errlen, "a settle is already under way");
        return -1;
    }
    for (unsigned b = 0; b < NBUCKETS * 4; b++)
        for (struct mem_insn *m = mem_insns[b]; m; m = m->next)
            n += m->ram >= LEARN_RAM && !m->io;
    learned = n;
    settles++;
    reset_pending = true;
    uint64_t want = settles_done + 1;
    __atomic_store_n(&settle_requested, 1, __ATOMIC_RELEASE);
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 5;
    while (settles_done < want)
        if (pthread_cond_timedwait(&settled_cond, &lock, &until) == ETIMEDOUT)
            break;
    int ok = settles_done >= want;
    pthread_mutex_unlock(&lock);
    if (!ok)
        snprintf(err, errlen, "settle did not complete within 5 s (no vCPU is running)");
    return ok ? 0 : -1;
}

/* autosettle=S: every S seconds, settle if at least AUTOSETTLE_MIN more instructions have
 * become learnable since the last settle (a boot, or a trial's new code paths). */
#define AUTOSETTLE_MIN 500
static unsigned autosettle_s;

static void *autosettle_thread(void *arg)
{
    uint64_t last = 0;
    for (;;) {
        sleep(autosettle_s);
        uint64_t n = 0;
        pthread_mutex_lock(&lock);
        for (unsigned b = 0; b < NBUCKETS * 4; b++)
            for (struct mem_insn *m = mem_insns[b]; m; m = m->next)
                n += m->ram >= LEARN_RAM && !m->io;
        pthread_mutex_unlock(&lock);
        if (n >= last + AUTOSETTLE_MIN) {
            char err[200];
            if (settle(err, sizeof(err)) == 0)
                last = n;
        }
    }
    return NULL;
}

static void serve(int conn)
{
    char buf[4200];
    size_t used = 0;
    for (;;) {
        ssize_t got = read(conn, buf + used, sizeof(buf) - 1 - used);
        if (got <= 0)
            return;
        used += (size_t)got;
        buf[used] = 0;
        char *nl;
        while ((nl = strchr(buf, '\n'))) {
            *nl = 0;
            char reply[512] = "ok\n";
            char err[400];
            if (strncmp(buf, "dump ", 5) == 0 && buf[5]) {
                if (dump(buf + 5, err, sizeof(err)) != 0)
                    snprintf(reply, sizeof(reply), "error %s\n", err);
            } else if (strcmp(buf, "settle") == 0) {
                if (settle(err, sizeof(err)) != 0)
                    snprintf(reply, sizeof(reply), "error %s\n", err);
            } else if (strcmp(buf, "ping") != 0) {
                snprintf(reply, sizeof(reply), "error unknown command (use: dump PATH, settle)\n");
            }
            if (write(conn, reply, strlen(reply)) < 0)
                return;
            size_t rest = used - (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, rest);
            used = rest;
            buf[used] = 0;
        }
        if (used >= sizeof(buf) - 1)
            return;                      /* a line too long: drop the connection */
    }
}

static void *control_thread(void *arg)
{
    int srv = (int)(intptr_t)arg;
    for (;;) {
        int conn = accept(srv, NULL, NULL);
        if (conn < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return NULL;
        }
        serve(conn);
        close(conn);
    }
}

static int start_control(const char *path)
{
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof(addr.sun_path)) {
        qemu_plugin_outs("vbexits: control socket path too long\n");
        return -1;
    }
    strcpy(addr.sun_path, path);
    int srv = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (srv < 0)
        return -1;
    unlink(path);
    if (bind(srv, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(srv, 4) != 0) {
        close(srv);
        qemu_plugin_outs("vbexits: cannot listen on the control socket\n");
        return -1;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, control_thread, (void *)(intptr_t)srv) != 0) {
        close(srv);
        return -1;
    }
    pthread_detach(t);
    return 0;
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
    char err[400];
    if (out_path && dump(out_path, err, sizeof(err)) != 0) {
        qemu_plugin_outs("vbexits: ");
        qemu_plugin_outs(err);
        qemu_plugin_outs("\n");
    }
    if (control_path)
        unlink(control_path);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "control=", 8) == 0)
            control_path = strdup(argv[i] + 8);
        else if (strncmp(argv[i], "out=", 4) == 0)
            out_path = strdup(argv[i] + 4);
        else if (strcmp(argv[i], "all=on") == 0)
            all_code = true;
        else if (strcmp(argv[i], "all=off") == 0)
            all_code = false;
        else if (strcmp(argv[i], "callers=off") == 0)
            no_callers = true;
        else if (strcmp(argv[i], "mmio=off") == 0)
            no_mmio = true;
        else if (strcmp(argv[i], "learn=off") == 0)
            no_learn = true;
        else if (strncmp(argv[i], "autosettle=", 11) == 0)
            autosettle_s = (unsigned)atoi(argv[i] + 11);
        else {
            qemu_plugin_outs("vbexits: unknown argument (use control=, out=, all=on|off, "
                             "callers=off, mmio=off, learn=off, autosettle=S)\n");
            return -1;
        }
    }
    for (int p = 0; p < 256; p++) {
        char name[16];
        snprintf(name, sizeof(name), "port 0x%02x", p);
        port_names[p] = strdup(name);
    }
    if (control_path && start_control(control_path) != 0)
        return -1;
    plugin_id = id;
    if (autosettle_s && !no_learn) {
        pthread_t t;
        if (pthread_create(&t, NULL, autosettle_thread, NULL) == 0)
            pthread_detach(t);
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
