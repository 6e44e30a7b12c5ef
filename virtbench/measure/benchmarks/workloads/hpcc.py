"""hpcc: the HPC Challenge 1.5.0 (Debian's `hpcc`, Open MPI 4.1) with one MPI rank per CPU.

Felter et al. (ISPASS 2015) ran Linpack, STREAM and RandomAccess on bare metal, Docker and
KVM; the HPC Challenge bundles all three with DGEMM, PTRANS, FFT and b_eff's ring latency
and bandwidth, in one MPI program on one host. Each trial:

1. learns the environment's CPUs (`nproc`) and the memory it may use (MemAvailable inside
   it, capped by what virtbench gave it: a guest's or a container's mem=), unless the
   parameters fix both (`ranks`, `n`);
2. plans the run (pure): ranks, a P x Q grid as square as the ranks allow (P <= Q), HPL's N
   from `n` or from `memory` (a fraction of that memory for HPL's matrix: 8 N^2 bytes),
   rounded down to a multiple of NB;
3. runs one script in the environment: a fresh work directory under its scratch directory,
   hpccinf.txt written from the plan, `mpirun -np R hpcc` (shared memory only, see MPIRUN),
   hpccoutf.txt printed on stdout and the directory removed on every exit; the script stops
   mpirun itself before the trial's time limit, so a timed-out trial also leaves nothing;
4. parses hpccoutf.txt (hpcc_output.py): a run that did not finish, or whose HPL residual
   check FAILED, is a failed trial in one line, never a number.

No warm-up run: each test of HPCC times its own kernel after setting it up (STREAM and b_eff
discard their first pass; RandomAccess and HPL time only the updates and the solve)."""
from __future__ import annotations

import math
import shlex
from dataclasses import dataclass

from ....core.errors import VirtbenchError
from ....core.outcome import Metric, TrialOutcome
from ....machinery.machine import meminfo
from ..base import Benchmark, ParseError
from .hpcc_output import hpl_input_error, mpi_start_error, parse_hpcc, run_shape, summary

# hpcc's input file, HPL's HPL.dat with four PTRANS lines (README: lines 33-36): one N, one
# NB, one P x Q grid, the residual threshold 16.0 and HPL's own example settings otherwise;
# PTRANS runs at N/2 with the same NB and grid (no extra sizes)
HPCCINF = """\
HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
{n}         Ns
1            # of NBs
{nb}           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
{p}            Ps
{q}            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                               Number of additional problem sizes for PTRANS
0                               values of N
0                               number of additional blocking sizes for PTRANS
0                               values of NB
"""

# root runs it (virtbench does); more ranks than CPUs allowed; one host, so shared memory
# only (btl self,vader: no TCP, no ssh launcher); vader's single-copy (CMA,
# process_vm_readv) off everywhere: a container's default seccomp profile refuses that call
# (open-mpi/ompi#4948), and every environment must run the same MPI path
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe",
          "--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none"]
TIMED_OUT_EXIT = 124        # timeout(1)'s: the script's own limit stopped mpirun
SLOWEST_GFLOPS_PER_RANK = 0.1   # the time limit assumes no slower rank (TCG guests included)


@dataclass(frozen=True)
class HpccPlan:
    """One trial's run: MPI ranks, HPL's N and NB, the P x Q process grid."""
    ranks: int
    n: int
    nb: int
    p: int
    q: int


def grid(ranks: int) -> tuple[int, int]:
    """(P, Q) with P x Q = ranks and P <= Q as close as the divisors allow (pure): HPL's
    advice for a grid, e.g. 4 -> 2 x 2, 6 -> 2 x 3, 7 -> 1 x 7."""
    p = max(d for d in range(1, math.isqrt(ranks) + 1) if ranks % d == 0)
    return p, ranks // p


def problem_size(memory: int, fraction: float, nb: int) -> int:
    """HPL's N for a matrix of `fraction` x `memory` bytes (8 N^2), a multiple of NB (pure)."""
    return (math.isqrt(int(fraction * memory) // 8) // nb) * nb


def hpccinf(plan: HpccPlan) -> str:
    """The hpccinf.txt a trial of `plan` runs with (pure)."""
    return HPCCINF.format(n=plan.n, nb=plan.nb, p=plan.p, q=plan.q)


def parse_probe(text: str) -> tuple[int | None, int | None]:
    """(CPUs, available bytes) from `nproc; cat /proc/meminfo` (pure); None where absent."""
    first, _, rest = text.partition("\n")
    cpus = int(first.strip()) if first.strip().isdigit() else None
    return (cpus if cpus and cpus > 0 else None), meminfo.available(rest)


def script(plan: HpccPlan, scratch: str, limit_s: int) -> str:
    """The `sh -c` script of one trial (pure; see the module)."""
    mpirun = " ".join(shlex.quote(a) for a in MPIRUN + ["-np", str(plan.ranks), "hpcc"])
    return "\n".join([
        "set -u",
        f"work=$(mktemp -d {shlex.quote(scratch)}/virtbench-hpcc.XXXXXX) || exit 1",
        "pid=",
        "trap 'rm -rf \"$work\"' EXIT",
        "trap '[ -n \"$pid\" ] && kill -TERM \"$pid\" 2>/dev/null; wait; exit 143' INT TERM",
        'cd "$work" || exit 1',
        "cat >hpccinf.txt <<'VIRTBENCH_HPCCINF'",
        hpccinf(plan) + "VIRTBENCH_HPCCINF",
        f"timeout -k 10 {limit_s} {mpirun} 1>&2 &",
        "pid=$!",
        'wait "$pid"; rc=$?; pid=',
        "[ -f hpccoutf.txt ] && cat hpccoutf.txt",
        f"[ $rc -eq {TIMED_OUT_EXIT} ] && echo 'virtbench: hpcc did not finish within"
        f" {limit_s} s' >&2",
        "exit $rc",
    ]) + "\n"


def run_limit(plan: HpccPlan) -> int:
    """Seconds the script gives mpirun: HPL's flops at SLOWEST_GFLOPS_PER_RANK, twice (the
    other tests are sized from the same memory), and 10 minutes more (pure)."""
    flops = 2.0 / 3.0 * plan.n ** 3 + 2.0 * plan.n ** 2
    return int(600 + 2 * flops / (SLOWEST_GFLOPS_PER_RANK * 1e9 * plan.ranks))


class Hpcc(Benchmark):
    name = "hpcc"
    family = "workload"
    description = ("the HPC Challenge 1.5.0 (HPL, DGEMM, STREAM, PTRANS, RandomAccess, FFT, "
                   "b_eff) under Open MPI, one rank per CPU of the environment; no warm-up "
                   "run (each test times its own kernel after its setup)")
    metrics = (
        Metric("hpl_gflops", "Gflop/s", True, "HPL (Linpack) on all ranks, its residual "
               "check passed"),
        Metric("dgemm_gflops", "Gflop/s", True, "StarDGEMM: DGEMM on every rank at once, "
               "the mean per rank"),
        Metric("randomaccess_gups", "GUP/s", True, "MPIRandomAccess: random table updates "
               "over all ranks"),
        Metric("ptrans_gbs", "GB/s", True, "PTRANS: parallel matrix transpose"),
        Metric("fft_gflops", "Gflop/s", True, "MPIFFT: a distributed complex 1-D FFT"),
        Metric("ring_latency_us", "us", False, "b_eff: randomly ordered ring latency of "
               "8-byte messages"),
        Metric("ring_bandwidth_gbs", "GB/s", True, "b_eff: randomly ordered ring bandwidth "
               "of 2 MB messages, per rank"),
        Metric("stream_triad_gbs", "GB/s", True, "StarSTREAM Triad: every rank at once, "
               "the mean per rank"),
    )
    tools = ("mpirun", "hpcc")
    packages = ("hpcc", "openmpi-bin")
    needs = ("scratch",)
    # ranks 0: one per CPU of the environment (nproc); n 0: HPL's N from `memory`, the
    # fraction of the environment's available memory HPL's matrix takes
    defaults = {"ranks": 0, "n": 0, "memory": 0.5, "nb": 80}
    quick = {"n": 2000}

    def check(self, params):
        if not 0 <= params["ranks"] <= 4096:
            raise VirtbenchError("benchmark hpcc: ranks from 1 to 4096, or 0 for one per CPU "
                                 "of the environment")
        if not 1 <= params["nb"] <= 1024:
            raise VirtbenchError("benchmark hpcc: nb (HPL's block size) from 1 to 1024")
        if params["n"] != 0 and not params["nb"] <= params["n"] <= 2_000_000:
            raise VirtbenchError("benchmark hpcc: n (HPL's matrix order) from nb to 2000000, "
                                 "or 0 to size it from memory")
        if not 0.01 <= params["memory"] <= 0.9:
            raise VirtbenchError("benchmark hpcc: memory (the fraction of the environment's "
                                 "available memory for HPL's matrix) from 0.01 to 0.9")

    def memory_need(self, params):
        """HPL's matrix with an explicit n; sized from memory, it fits by construction."""
        return 8 * params["n"] ** 2 if params["n"] else 0

    def timeout(self, params):
        n, ranks = params["n"], params["ranks"]
        if not n or not ranks:
            return 3600.0
        return run_limit(HpccPlan(ranks, n, params["nb"], *grid(ranks))) + 120.0

    # -- running -------------------------------------------------------------------------
    def plan(self, params: dict, cpus: int | None, memory: int | None) -> HpccPlan:
        """The run for `params` in an environment of `cpus` and `memory` bytes (pure);
        ParseError (a failed trial) when a figure it needs is unknown or too small."""
        ranks = params["ranks"] or cpus
        if not ranks:
            raise ParseError("could not learn the environment's CPUs (nproc); "
                             "give ranks=N")
        n = params["n"]
        if not n:
            if not memory:
                raise ParseError("could not learn the environment's available memory "
                                 "(/proc/meminfo); give n=N")
            n = problem_size(memory, params["memory"], params["nb"])
            if n < params["nb"]:
                raise ParseError(f"{params['memory']:g} of {memory / 2**20:.0f} MiB is too "
                                 "little for HPL's matrix; raise memory or give n=N")
        return HpccPlan(ranks, n, params["nb"], *grid(ranks))

    def probe(self, env, params) -> tuple[int | None, int | None]:
        """The environment's CPUs and the memory it may use (see the module), as far as
        the parameters need them."""
        if params["ranks"] and params["n"]:
            return params["ranks"], None
        res = env.exec(["sh", "-c", "nproc; cat /proc/meminfo"], timeout=60)
        if res.exit != 0:
            return None, None
        cpus, available = parse_probe(res.stdout)
        given = env.memory_bytes() if env.capabilities().memory_size else None
        known = [m for m in (available, given) if m]
        return cpus, (min(known) if known else None)

    def run_trial(self, env, params) -> TrialOutcome:
        try:
            plan = self.plan(params, *self.probe(env, params))
        except ParseError as exc:
            return TrialOutcome(error=str(exc))
        limit = run_limit(plan)
        argv = ["sh", "-c", script(plan, env.scratch_dir(), limit), "virtbench-hpcc"]
        outcome = judged(self.outcome_of(env.exec(argv, timeout=limit + 120.0),
                                         limit + 120.0), plan)
        if plan.ranks == 1 and outcome.error is None:
            outcome.warnings.append(("ring_left_out", ONE_RANK))
        return outcome

    def parse(self, stdout: str) -> dict[str, float]:
        return parse_hpcc(stdout)


ONE_RANK = ("hpcc on 1 rank: ring_latency_us, ring_bandwidth_gbs left out (b_eff's ring needs "
            "two ranks); give the environment two CPUs or ranks=2")


def judged(outcome: TrialOutcome, plan: HpccPlan) -> TrialOutcome:
    """A parsed trial failed when its report is not of the run planned, or when HPL refused
    the input file: hpcc 1.5.0 then runs HPL's own defaults (N=3520 on 2 ranks here) and
    reports Success=1, so its numbers are of another run. The figures stay as evidence."""
    refused = hpl_input_error(outcome.stderr)
    started = mpi_start_error(outcome.stderr) if outcome.error else None
    if started:
        outcome.error = f"{outcome.error.split(':')[0]}: {started}"
    if outcome.error is None:
        outcome.error = shape_error(outcome.stdout, plan)
    if refused:
        outcome.error = (f"{outcome.error}; " if outcome.error else "") + \
            f"HPL refused hpccinf.txt ({refused}), so hpcc ran its own defaults instead"
    if outcome.error and outcome.values:
        outcome.partial, outcome.values = {**outcome.partial, **outcome.values}, {}
    return outcome


def shape_error(text: str, plan: HpccPlan) -> str | None:
    """Why a parsed report is not of the run planned (other ranks or N), or None (pure)."""
    ranks, n = run_shape(summary(text))
    if (ranks, n) != (plan.ranks, plan.n):
        return (f"hpccoutf.txt is of a run with {ranks} ranks and N={n}, not the "
                f"{plan.ranks} ranks and N={plan.n} planned")
    return None
