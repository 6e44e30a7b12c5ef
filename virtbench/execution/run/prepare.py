"""The prepared plan: a study checked against this host before anything runs.

prepare() checks everything that can be checked before anything runs (exit 2, nothing
stored): the study's values, the environments (created, probed, resolved; not started),
the cases and the programs they need, the baseline and what adaptive trials and duet mode
ask of it, the cases an environment cannot run (skipped, said once). Each environment that
takes Debian packages (capability `packages`: a tree virtbench builds) is given the union of
its cases' `Benchmark.packages`; the others' missing programs are refused in one line naming
the packages and where to install them. The runner runs what
it returns (Prepared); adaptive trials and duet mode read it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ...core.capabilities import cannot_run
from ...core.errors import VirtbenchError
from ...machinery.host import pinning, workroot
from ...machinery.host import tools as hosttools
from ...machinery.kernels import build as kernels
from ...measure import benchmarks, environments
from ...measure.environments import Environment
from ...study import targets
from ...study.baseline import Candidate, resolve_baseline
from ...study.design import Study, skipped_environments, validate
from . import warmup


@dataclass
class Prepared:
    study: Study
    envs: dict[str, Environment]                 # label -> environment, in study order
    cases: dict[str, tuple[benchmarks.Benchmark, dict[str, Any]]]   # label -> (bench, params)
    baseline: str | None                         # resolved: a label of envs, or None
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (spec, why) not run here
    # (environment label, case label, why): cases the environment cannot run, left out
    skipped_cases: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def skip(self) -> set[tuple[str, str]]:
        return {(env, case) for env, case, _ in self.skipped_cases}

    @property
    def runnable(self) -> int:
        """(environment, benchmark) cases the plan runs."""
        return len(self.envs) * len(self.cases) - len(self.skipped_cases)

    def for_run(self, seed: int) -> "Prepared":
        """This plan with the study as a run stores it (and runs and reports it): its
        baseline resolved, its trial order's seed chosen; a copy, the study is frozen."""
        return replace(self, study=replace(self.study, baseline=self.baseline, seed=seed))


def prepare(study: Study, dry_run: bool = False) -> Prepared:
    """Validate the study and create (not start) its environments. Raises VirtbenchError.

    dry_run: the plan only; nothing is probed, resolved (no KVM probe boot) or built (no
    kernel, no image), so an accelerator chosen at run time shows as the spec gives it."""
    validate(study)
    if not dry_run:
        workroot.ensure()   # a work root we cannot trust is refused before anything is made
    named = targets.load_targets() if any(e.target for e in study.environments) else {}
    skipped = skipped_environments(study, named, str(targets.targets_path()))
    envs: dict[str, Environment] = {}
    candidates: list[Candidate] = []       # what the baseline may name: label or spec
    for entry in study.environments:
        if entry.target:
            if entry.target not in named:
                continue
            env = environments.create(named[entry.target])
            env.stands_for = entry.spec      # the study's environment it is measured as
        elif entry.requires:
            continue
        else:
            env = environments.create(entry.parsed())
        if env.name and env.name in envs:          # known before any probe: say it now
            raise _same_label(entry.spec, env.label)
        if not dry_run:
            usability = type(env).probe()
            if not usability.usable:
                raise VirtbenchError(f"environment {entry.spec}: not usable here: "
                                     f"{usability.reason}")
            env.resolve()
        if env.label in envs:
            raise _same_label(entry.spec, env.label)
        envs[env.label] = env
        candidates.append(Candidate(env.label, entry.spec))
    cases = {}
    for case in study.benchmarks:
        bench = benchmarks.get(case.name)
        cases[case.label] = (bench, bench.params(case.params, quick=study.quick))
    # a baseline named by its spec: its label depends on what resolve() settled (qemu-tcg/...
    # or qemu-kvm/...), which a study file cannot know; stored with the run (for_run)
    baseline = resolve_baseline(study.baseline, candidates, first_if_none=True)
    check_modes(study, envs, baseline)
    skipped_here = skipped_cases(envs, cases)
    give_packages(envs, cases, {(e, c) for e, c, _ in skipped_here})
    if not dry_run:
        check_tools(envs, cases)
    needs_kernels = any(set(b.tools) & set(kernels.KERNELS) for b, _ in cases.values())
    if needs_kernels and not dry_run:
        kernels.build()   # a missing compiler is bad input: fail before the run exists
    if not envs:
        raise VirtbenchError("no environment of this study can run here: " + "; ".join(
            f"{spec}: {why}" for spec, why in skipped))
    return Prepared(study, envs, cases, baseline, skipped, skipped_here)


def _same_label(spec: str, label: str) -> VirtbenchError:
    return VirtbenchError(f"environment {spec} has the same label as another ({label}); "
                          "give one of them a name of its own (name=LABEL)")


def check_tools(envs: dict[str, Environment], cases: dict) -> None:
    """A benchmark whose program an environment lacks (where it can tell: the host's own, an
    SSH target's) is refused before anything runs, in one line naming the package that
    brings it and where to install it."""
    for label, env in envs.items():
        for case, (bench, _) in cases.items():
            lacking = env.missing_tools(bench.tools)
            if lacking:
                raise VirtbenchError(
                    f"{label} cannot run {case}: {', '.join(lacking)} not found; "
                    f"{hosttools.install_hint(lacking, env.tools_place())}")


def packages_for(label: str, cases: dict, skip: set[tuple[str, str]]) -> tuple[str, ...]:
    """The Debian packages environment `label` needs: the union of `packages` of the
    benchmarks of its cases that run (not skipped), sorted, each once."""
    return tuple(sorted({p for case, (bench, _) in cases.items() if (label, case) not in skip
                         for p in bench.packages}))


def give_packages(envs: dict[str, Environment], cases: dict,
                  skip: set[tuple[str, str]]) -> None:
    """Each environment that declares it takes packages (capability `packages`: it runs a
    variant of its tree with them) is given those of its cases, before it starts; the
    others keep their own programs (check_tools)."""
    for label, env in envs.items():
        wanted = packages_for(label, cases, skip)
        if wanted and env.capabilities().packages:
            env.add_packages(wanted)


def check_modes(study: Study, envs: dict[str, Environment], baseline: str | None) -> None:
    """Adaptive trials and duet mode compare environments with their reference: refused
    without one (and duet with other than two environments) before anything runs."""
    if study.adaptive and baseline is None:
        raise VirtbenchError("trials = \"auto\" decides each environment against its "
                             "reference: name a baseline (--baseline LABEL) or add native")
    if study.duet:
        if baseline is None or len(envs) != 2:
            raise VirtbenchError(
                f"duet mode measures one environment beside its reference at the same time: "
                f"give exactly two environments, one of them the baseline, not {len(envs)} "
                "(e.g. --env native --env native:name=twin --duet)")
        if len(pinning.host_cpus()) < 2:
            raise VirtbenchError("duet mode needs two CPUs, one for each side; this host "
                                 "offers one")


def skipped_cases(envs: dict[str, Environment], cases: dict) -> list[tuple[str, str, str]]:
    """(environment, case, why) for every case an environment cannot run, decided from what
    it says it can offer and what the benchmark needs: before anything starts."""
    out = []
    for label, env in envs.items():
        caps = env.capabilities()
        for case, (bench, params) in cases.items():
            why = cannot_run(caps, bench.requirements(params))
            if why is not None:
                out.append((label, case, why))
    return out


def skip_line(env: str, case: str, why: str) -> str:
    return f"{case} on {env}: {why}"


def estimate_s(prepared: Prepared) -> float:
    """A rough figure for --dry-run: per-trial timeouts are far too pessimistic, so use
    the benchmark's own notion of its size where it has one."""
    total = 0.0
    per_case = prepared.study.trials + warmup.count(prepared.study)   # warm-ups run too
    skip = prepared.skip
    for case, (bench, params) in prepared.cases.items():
        per = float(params.get("target_seconds", 0) or 0) + 2.0
        total += per * per_case * sum((env, case) not in skip for env in prepared.envs)
    return total
