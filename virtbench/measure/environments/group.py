"""Several instances of one environment, measured at the same moment (`instances = N`).

The CNAF study ran 8 VMs at once and reported their aggregate and how far apart they were
("max difference 14 %, average 5 %"). A group starts N copies of an environment, runs each
trial in all of them at once (threads released by one barrier), and reports per metric the
aggregate, each instance, the spread between instances and Jain's fairness index.

The aggregate has one definition (virtbench/foundations/stats/aggregate.py), the one stream's
`processes = N` uses: for a rate, the work of all instances over one common interval on one
clock (the host's), best block; for a job's time, the makespan. A benchmark whose tool stamps
its timed blocks (`timed`: our kernels) gets exactly that: before the trial each instance's
CLOCK_MONOTONIC is measured against the host's (agent pings; the offset is known to within
half the round trip, and measured again after the trial for drift), every instance is told
the same start moment on its own clock (`--start-at`; a tool of several blocks also a slot per
block, `--slot`, so that the instances run each block side by side: together.py), and its
stamps are mapped back onto the host's clock. A benchmark whose tool stamps nothing (fio,
iperf3, dd...) gets the sum of the instances' own rates, their runs released together by one
barrier with the same parameters: said so in the metric's description, never called a common
interval.
docs/instances-and-limits.md has the whole of it.
"""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ...core.capabilities import Capabilities, can, cannot
from ...core.errors import AgentError, VirtbenchError
from ...core.outcome import Metric, TrialOutcome
from ...foundations.stats.aggregate import ClockOffset, Span, across, to_host
from .base import Environment
from .capacity import host_capacity, memory_refusal
from .resources import Resources
from .instances import (
    aggregate_method,
    aggregates,
    combine,
    describe_aggregate,
    group_metrics,
    instance_evidence,
    jain_index,
    spread_pct,
)
from .together import Together

OVERCOMMIT = 2.0          # at most this many vCPUs (or busy processes) per host core
MEMORY_SHARE = 0.8        # at most this share of the host's memory for all instances


@dataclass
class PairPath:
    """How instance 0 (client) reaches instance 1 (server) across the host."""

    client_address: str
    server_address: str
    client_prefix: list[str]
    server_prefix: list[str]


class InstanceGroup(Environment):
    """N copies of an environment; trials run in all of them at once."""

    kind = "group"

    def __init__(self, members: list[Environment], spec):
        # no Environment.__init__: the options are the members'
        self.members = members
        self.spec = spec
        self.values = dict(members[0].values)
        self.agent = None
        self.boot_s = None
        self.notes = []
        self.resources = Resources()
        self.step_s = {}
        self._instances_held = None
        self.kind = members[0].kind
        self.name = members[0].name      # the members' label, which the group's extends
        self._pair: PairPath | None = None
        self.together = Together()       # start lead and slots per benchmark, learnt
        for i, m in enumerate(members):
            m.as_instance(i)         # its own subnet, scratch directory...
            m.instance_of = self
        self._check_capacity()
        self._hold_instances()      # what an instance made before any start goes too

    def _check_capacity(self) -> None:
        n = len(self.members)
        cores, mem = host_capacity()
        vcpus = int(self.values.get("vcpus", 1) or 1) * n
        if vcpus > OVERCOMMIT * cores:
            raise VirtbenchError(
                f"environment {self.spec}: {n} instances need {vcpus} CPUs, more than "
                f"{OVERCOMMIT:g} x the host's {cores} cores; lower instances or vcpus")
        need = self.members[0].host_memory_reserved() * n
        if need > MEMORY_SHARE * mem:
            raise VirtbenchError(
                f"environment {self.spec}: {n} instances need {need / 2**30:.1f} GiB, more than "
                f"{MEMORY_SHARE:.0%} of the host's {mem / 2**30:.1f} GiB; lower instances or mem")

    @property
    def label(self) -> str:
        """The members' label, then `/xN` (`native/x4`, `pool/x4` for name=pool): the
        references find the baseline at the same N by it (analysis/references.py)."""
        return f"{self.members[0].label}/x{len(self.members)}"

    @property
    def kind_label(self) -> str:
        return f"{self.members[0].kind_label}/x{len(self.members)}"

    @property
    def instance_count(self) -> int:
        return len(self.members)

    def missing_tools(self, tools) -> list[str]:
        return self.members[0].missing_tools(tools)

    def tools_place(self) -> str | None:
        return self.members[0].tools_place()

    def add_packages(self, packages) -> None:
        """Every instance runs the same tree: each gets the packages."""
        for m in self.members:
            m.add_packages(packages)

    def capabilities(self) -> Capabilities:
        """What every instance can (they are alike), and pairing: exactly two instances
        whose network paths virtbench can join."""
        caps = self.members[0].capabilities()
        n = len(self.members)
        if n != 2:
            pairing = cannot(f"environment {self.spec}: guest-to-guest benchmarks need exactly "
                             f"2 instances, not {n}; use instances=2")
        elif not caps.net_path:
            pairing = caps.net_path
        elif not caps.pair_end:
            pairing = caps.pair_end
        else:
            pairing = can("instance 0 to instance 1 through both host sides")
        return caps.with_(pairing=pairing)

    def resolve(self) -> None:
        for m in self.members:
            m.resolve()

    def _hold_instances(self) -> None:
        """The instances are the group's to release, last first (each one's stop() is
        idempotent, so one not started yet is no harm)."""
        if self._instances_held is None:
            self._instances_held = self.resources.add("the instances", self._stop_instances)

    def _stop_instances(self) -> None:
        self._instances_held = None
        problems = []
        for m in reversed(self.members):
            try:
                m.stop()
            except Exception as exc:      # the other instances must still go
                problems.append(exc)
        if problems:
            raise problems[0]

    def launch(self) -> None:
        """Each instance's whole life cycle, one after the other (a failed one: those
        already up are stopped as any resource is released)."""
        self._hold_instances()
        for m in self.members:
            m.start()

    def ready(self) -> None:
        boots = [m.boot_s for m in self.members if m.boot_s is not None]
        self.boot_s = max(boots) if boots else None
        self.notes = list(dict.fromkeys(n for m in self.members for n in m.notes))

    def pause(self) -> None:
        for m in self.members:
            m.pause()

    def resume(self) -> None:
        for m in self.members:
            m.resume()

    def is_alive(self) -> bool:
        return all(m.is_alive() for m in self.members)

    def lost_reason(self) -> str:
        for i, m in enumerate(self.members):
            if not m.is_alive():
                return f"instance {i}: {m.lost_reason()}"
        return self.members[0].lost_reason()

    def vcpu_threads(self) -> list[int]:
        """Every instance's vCPU thread ids, instance by instance."""
        return [t for m in self.members for t in m.vcpu_threads()]

    def pin_threads(self, bench, params: dict) -> list[tuple[int, int]] | None:
        """Every instance's targets at once: they run together, so their CPUs must differ."""
        targets = []
        for m in self.members:
            mine = m.pin_threads(bench, params)
            if mine is None:
                return None
            targets += mine
        return targets

    def kernel_path(self, name: str) -> str:
        return self.members[0].kernel_path(name)

    def _shares_memory(self) -> bool:
        return self.members[0].host_memory_reserved() == 0

    def memory_bytes(self) -> int | None:
        """What one instance may use: its own RAM (a guest), or its share of the host's."""
        avail = self.members[0].memory_bytes()
        if avail is None or not self._shares_memory():
            return avail
        return avail // len(self.members)

    def host_memory_reserved(self) -> int:
        return sum(m.host_memory_reserved() for m in self.members)

    def memory_refusal(self, bench, params) -> str | None:
        """Why this group cannot run `bench` with `params` in every instance at once, or None."""
        known = self.members[0].memory_bytes() if self.capabilities().memory_size else None
        return memory_refusal(str(self.spec), len(self.members), bench.memory_need(params),
                              known, self._shares_memory(), bench.name)

    def metadata(self) -> dict:
        md = self.members[0].metadata()
        md["instances"] = len(self.members)
        return md

    def exec(self, argv, timeout, env=None, alive=None):
        return self.members[0].exec(argv, timeout, env, alive)

    def metrics_for(self, bench) -> tuple[Metric, ...]:
        if getattr(bench, "pairwise", False):
            return bench.metrics
        return group_metrics(bench.metrics, len(self.members), tuple(getattr(bench, "timed", ())))

    def pair_path(self) -> PairPath:
        """Instance 0 and instance 1 joined through their host-side namespaces (made once)."""
        if self._pair is None:
            if len(self.members) != 2:
                raise VirtbenchError(f"environment {self.spec}: a guest-to-guest benchmark needs "
                                     f"exactly 2 instances, not {len(self.members)}")
            from ...machinery.host.net.netpath import join_hosts
            a, b = (m.net_path() for m in self.members)
            join_hosts(a.host_prefix[-1], a.env_address, b.host_prefix[-1], b.env_address)
            self._pair = PairPath(a.env_address, b.env_address, a.env_prefix, b.env_prefix)
            # its veth goes with the members' namespaces: only the record is let go
            self.resources.add("the pair's path", lambda: setattr(self, "_pair", None))
        return self._pair

    def run_trial(self, bench, params) -> TrialOutcome:
        """The benchmark in every instance at the same moment; one combined outcome.
        A pairwise benchmark (guest to guest) runs once, between instance 0 and 1."""
        if getattr(bench, "pairwise", False):
            try:
                path = self.pair_path()
            except VirtbenchError as exc:
                return TrialOutcome(error=str(exc))
            return bench.run_pair(self.members[0], self.members[1], path, params)
        refusal = self.memory_refusal(bench, params)
        if refusal:
            return TrialOutcome(error=refusal)
        timed = tuple(getattr(bench, "timed", ()))
        lead, slot = self.together.plan(bench)
        before = starts = None
        if timed:
            try:
                before = self._clocks()
            except AgentError as exc:
                return TrialOutcome(error=f"agent lost: {exc}")
            if all(before):
                moment = time.monotonic() + lead
                starts = [moment + c.offset_s for c in before]
        outcomes = self._run_all(bench, params, starts, slot)
        text = "\n".join(f"== instance {i}\n{o.stdout}" for i, o in enumerate(outcomes))
        errs = "\n".join(f"== instance {i}\n{o.stderr}" for i, o in enumerate(outcomes))
        out = TrialOutcome(stdout=text, stderr=errs, exit=0,
                           wall_s=max((o.wall_s or 0.0) for o in outcomes),
                           warnings=[w for o in outcomes for w in o.warnings])
        failed = [(i, o) for i, o in enumerate(outcomes) if not o.ok]
        if failed:
            lost = [(i, o) for i, o in failed if o.error.startswith("agent lost")]
            i, o = (lost or failed)[0]
            # an agent lost in one instance is the group's agent lost (the runner restarts it)
            out.error = (f"agent lost: instance {i}: {o.error[len('agent lost: '):]}" if lost
                         else f"instance {i}: {o.error}")
            out.exit = o.exit
            out.partial = instance_evidence(bench.metrics, outcomes)
            return out
        spans, clocks = None, None
        if starts is not None:
            clocks = self._mapped(before)
            spans = self._host_spans(bench, outcomes, clocks, timed)
        out.values, methods = aggregates(bench.metrics, [o.values for o in outcomes], spans)
        out.detail = {"aggregate": methods}
        if clocks is not None:
            detail, warnings = self.together.review(
                bench, [bench.timing(o.stdout) for o in outcomes], clocks, spans, lead, slot)
            out.detail.update(detail)
            out.warnings += warnings
        return out

    # -- a trial in every instance --------------------------------------------------------
    def _run_all(self, bench, params, starts, slot) -> list[TrialOutcome]:
        barrier = threading.Barrier(len(self.members))

        def one(i):
            member = self.members[i]
            barrier.wait(timeout=60)
            try:
                if starts is not None and slot is not None:
                    return bench.run_trial(member, params, start_at=starts[i], slot_s=slot)
                if starts is not None:
                    return bench.run_trial(member, params, start_at=starts[i])
                return bench.run_trial(member, params)
            except AgentError as exc:     # this instance's agent gone: keep what it sent
                return TrialOutcome(error=f"agent lost: {exc}", stdout=exc.stdout,
                                    stderr=exc.stderr, partial=bench.evidence(exc.stdout))

        with ThreadPoolExecutor(max_workers=len(self.members)) as pool:
            return list(pool.map(one, range(len(self.members))))

    def _clocks(self) -> list[ClockOffset | None]:
        return [m.clock_offset() for m in self.members]

    def _mapped(self, before: list[ClockOffset]) -> list[ClockOffset]:
        """Each instance's offset for the trial: measured before and after (drift), or the
        one before when the after one cannot be had."""
        try:
            after = self._clocks()
        except AgentError:
            after = [None] * len(before)
        return [across(b, a) if a is not None else b for b, a in zip(before, after)]

    @staticmethod
    def _host_spans(bench, outcomes, clocks, timed) -> dict[str, list[list[Span]]]:
        """Per timed metric, each instance's blocks on the host's clock; a metric some
        instance did not stamp is left out (its aggregate falls back, and says so)."""
        timings = [bench.timing(o.stdout) for o in outcomes]
        spans = {}
        for name in timed:
            if all(t is not None and name in t.spans for t in timings):
                spans[name] = [to_host(t.spans[name], c) for t, c in zip(timings, clocks)]
        return spans
