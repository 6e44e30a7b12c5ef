"""cpu-suite: the programs SPEC CPU2006 took from open projects, as Debian 12 packages them,
each on a fixed input virtbench makes in the environment, timed one after another.

Not SPEC's inputs and not a SPEC score: the programs are the open projects SPEC took (GNU
Go, HMMER, POV-Ray, bzip2, GCC, Xalan-C++) and two in the role of SPEC's (x264 for h264ref,
Stockfish for sjeng); the inputs are virtbench's (cpusuite_inputs.py), the score a geometric
mean of rates relative to reference times measured on this project's host. Each program runs
single-threaded (SPEC's rate with one copy); inputs are made once per environment and not
timed; each program's output is checked, and a wrong or unfinished one fails the trial.
"""
from __future__ import annotations

import hashlib
import json
import math

from .....core.errors import VirtbenchError
from ...base import Benchmark, Metric, TrialOutcome, exec_error
from .inputs import GENERATOR
from .programs import (BY_NAME, PEAK_BYTES, PROGRAMS, REFERENCE_S, SIZES, Program,
                                fill, judged)

SEED = 1       # the inputs' seed: fixed, so the reference times hold


def rate_name(program: str) -> str:
    return f"{program}_per_s"


def chosen(text: str) -> list[str]:
    """The programs a `programs` parameter names ('all' or a comma list), in suite order;
    an unknown name is one line naming the valid ones."""
    words = [w.strip() for w in text.split(",") if w.strip()]
    if words == ["all"]:
        return [p.name for p in PROGRAMS]
    unknown = [w for w in words if w not in BY_NAME]
    if unknown or not words:
        raise VirtbenchError(
            f"benchmark cpu-suite: programs={text!r} names no program or an unknown one "
            f"({', '.join(unknown) or 'none given'}); valid: all or a comma list of "
            f"{','.join(BY_NAME)}")
    return [p.name for p in PROGRAMS if p.name in words]


def score(seconds: dict[str, float], size: str) -> float:
    """The geometric mean of reference / measured seconds over the programs run (pure)."""
    ratios = [REFERENCE_S[size][name] / s for name, s in seconds.items()]
    return math.exp(sum(math.log(r) for r in ratios) / len(ratios))


def last_line(result) -> str:
    text = (result.stderr or "").strip() or (result.stdout or "").strip() or "(no output)"
    return text.splitlines()[-1]


class CpuSuite(Benchmark):
    name = "cpu-suite"
    family = "workload"
    description = ("the open programs SPEC CPU2006 took (gnugo, hmmsearch, povray, bzip2, gcc, "
                   "Xalan) and x264 and stockfish in h264ref's and sjeng's roles, each on a "
                   "fixed generated input, single-threaded, timed one after another; inputs "
                   "made once per environment, no warm-up run; NOT SPEC's inputs or a SPEC "
                   "score")
    metrics = tuple(Metric(rate_name(p.name), "1/s", True,
                           f"runs per second of {p.name} ({p.spec}'s role): 1 / its wall time")
                    for p in PROGRAMS) + (
        Metric("score", "ratio", True, "geometric mean over the programs run of reference / "
               "measured seconds (reference: this project's host, docs/benchmarks.md)"),)
    tools = tuple(dict.fromkeys(p.tool for p in PROGRAMS)) + ("hmmbuild", "python3")
    # libc6-dev: gcc's check links and runs the compiled program (python3: the agent's own)
    packages = tuple(dict.fromkeys(p.package for p in PROGRAMS)) + ("libc6-dev",)
    needs = ("scratch",)
    cpu_bound = True
    defaults = {"programs": "all", "size": "full"}
    quick = {"size": "quick"}

    def check(self, params):
        if params["size"] not in SIZES:
            raise VirtbenchError(f"benchmark cpu-suite: size={params['size']!r}; use "
                                 f"{' or '.join(SIZES)}")
        chosen(params["programs"])

    def memory_need(self, params):
        return PEAK_BYTES[params["size"]]

    def timeout(self, params):
        """Per command: generous, for emulated guests (TCG is tens of times slower)."""
        return 600.0 + 60 * max(REFERENCE_S[params["size"]].values())

    def workdir(self, env, program: Program, size: str) -> str:
        knobs = {k: SIZES[size][k] for k in program.knobs}
        key = hashlib.sha256(json.dumps([GENERATOR, SEED, knobs, program.prepare],
                                        sort_keys=True).encode()).hexdigest()[:12]
        return f"{env.scratch_dir()}/cpu-suite/{program.name}-{size}-{key}"

    def prepare(self, env, program: Program, size: str) -> str | None:
        """Make the program's inputs once per environment (not timed): an error, or None."""
        work, knobs = self.workdir(env, program, size), SIZES[size]
        if env.exec(["test", "-f", f"{work}/ready"], timeout=30).exit == 0:
            return None
        steps = [["rm", "-rf", work], ["mkdir", "-p", work],
                 ["python3", "-c", GENERATOR, program.name, str(SEED),
                  json.dumps({k: knobs[k] for k in program.knobs}), work]]
        if program.prepare:
            steps.append(fill(program.prepare, work, knobs))
        steps.append(["touch", f"{work}/ready"])
        for argv in steps:
            r = env.exec(argv, timeout=self.timeout({"size": size}))
            if r.exit != 0 or r.timed_out:
                return f"preparing {program.name}'s input: {argv[0]}: {exec_error(r) or 'failed'}"
        return None

    def run_program(self, env, program: Program, size: str):
        """Run one program (timed) and check its result: (seconds, cpu seconds) or an error."""
        work, knobs = self.workdir(env, program, size), SIZES[size]
        timeout = self.timeout({"size": size})
        r = env.exec(fill(program.run, work, knobs), timeout=timeout)
        error = exec_error(r, timeout)
        if error is None:
            error = judged(program.judge, r.stdout, r.stderr, knobs)
        if error is None and program.verify:
            v = env.exec(fill(program.verify, work, knobs), timeout=timeout)
            if v.exit != 0:
                error = f"its output is not the expected one ({last_line(v)})"
        if error is None and not r.wall_s > 0:
            error = f"no wall time measured ({r.wall_s!r} s)"
        if error:
            return None, error
        return (r.wall_s, (r.user_s or 0.0) + (r.sys_s or 0.0)), None

    def run_trial(self, env, params) -> TrialOutcome:
        size, names = params["size"], chosen(params["programs"])
        out = TrialOutcome(wall_s=0.0, cpu_s=0.0)
        seconds: dict[str, float] = {}
        for name in names:
            program = BY_NAME[name]
            try:
                error = self.prepare(env, program, size)
                timed, error = (None, error) if error else self.run_program(env, program, size)
            except VirtbenchError as exc:
                timed, error = None, str(exc)
            if error:
                out.error = f"cpu-suite: {name}: {error}"
                out.partial = {rate_name(n): 1.0 / s for n, s in seconds.items()}
                return out
            seconds[name] = timed[0]
            out.stdout += f"{name} {timed[0]:.3f} s\n"
            out.wall_s += timed[0]
            out.cpu_s += timed[1]
        out.values = {rate_name(n): 1.0 / s for n, s in seconds.items()}
        out.values["score"] = score(seconds, size)
        return out
