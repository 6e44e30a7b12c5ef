"""A tune's refinement (`--refine N`, docs/tune.md): the levels between the ends of the knobs
that matter, tried one by one against the best so far, in the same run.

The rule, as a specification: after the screening, the best is the screening's
recommendation (the first metric's), run as environment `r0`. For each knob in the tune's
order that has more than two levels and is in that recommendation, its levels between the
ends are tried from the recommended end inward: each try is a configuration (the best with
that knob at that level, environment `r1`, `r2`, ...) run against the best in
`max(trials, 3)` new blocks, both sides fresh, and decided on the tune's first metric by the
run's paired decision at the tune's minimum effect (results/analysis/refine.py). A try beyond
the band on the better side becomes the best; a knob's search stops after N tries in a row
that did not (`refine = N`), or when its levels run out. No knob to refine: nothing runs.
Each try is written into the run's detail (`tune_refine`) before its blocks run and its
outcome after, so a resumed run finishes the very same try; the confirmation then runs the
best against the base (execution/run/tune.py). The tries are a search, not claims: each is
decided at the study's alpha uncorrected, and only the confirmation's A/B, on fresh trials,
is said of the result.
"""
from __future__ import annotations

from typing import Callable

from ...core.errors import VirtbenchError
from ...measure.environments import Environment
from .adaptive import Blocks
from .tune import Recommend, add_configuration, make_environment, recommendation, \
    run_pair_blocks

MIN_BLOCKS = 3
FIRST = "r0"

# the step of environment `label` against `reference`: whether it moved the best
Moved = Callable[[str, str], bool]


class RefineStage:
    def __init__(self, session: Blocks, recommend: Recommend | None = None,
                 make: Callable[[str], Environment] | None = None):
        """The refinement of the tune run `session` runs; `recommend`, `make`: as the
        confirmation's (tests give their own)."""
        self.session = session
        self.run_id, self.store = session.run_id, session.store
        self.study = session.prepared.study
        self.entry = self.study.tune
        self.recommend = recommend or recommendation
        self.make = make or make_environment

    def run(self) -> dict:
        """Run what the refinement is missing; its record (the run detail's `tune_refine`)."""
        record = dict((self.store.get_run(self.run_id).get("detail") or {})
                      .get("tune_refine") or {})
        if "start" not in record:
            start = self.recommend(self.store, self.run_id)
            record = {"start": start, "best": start, "best_label": FIRST, "steps": []}
            self._save(record)
        knobs = [k for k in self.entry.knobs if len(k.levels) > 2 and k.name in record["start"]]
        if not knobs:
            record["stopped"] = "nothing to refine"
            self._save(record)
            return record
        try:
            self._add(record["start"], FIRST)
            for knob in knobs:
                self._search(record, knob)
        except VirtbenchError as exc:
            self.session.say(f"tune: the refinement stopped: {exc}")
            record["stopped"] = f"stopped: {exc}"
            self._save(record)
            return record
        record["stopped"] = "done"
        self._save(record)
        shown = ", ".join(f"{k}={v}" for k, v in record["best"].items())
        self.session.say(f"tune: refined: {shown} ({record['best_label']})")
        return record

    def _search(self, record: dict, knob) -> None:
        """One knob's tries, from the recommended end inward, to N misses in a row."""
        misses = 0
        for level in knob.inward(record["start"][knob.name]):
            if misses >= self.entry.refine:
                return
            step = next((s for s in record["steps"]
                         if s["knob"] == knob.name and s["level"] == level), None)
            if step is None:
                step = self._step(record, knob.name, level)
            if step.get("moved") is None:
                self._run_step(record, step)
            misses = 0 if step["moved"] else misses + 1

    def _step(self, record: dict, knob: str, level: str) -> dict:
        """A new try, written down before it runs."""
        levels = {**record["best"], knob: level}
        label = f"r{len(record['steps']) + 1}"
        trials = [t["trial"] for t in self.store.trials(self.run_id)]
        step = {"knob": knob, "level": level, "label": label, "levels": levels,
                "spec": self.entry.spec(levels, label), "reference": record["best_label"],
                "first_block": max([self.study.trials - 1, *trials]) + 1,
                "blocks": max(self.study.trials, MIN_BLOCKS), "moved": None}
        record["steps"].append(step)
        self._save(record)
        return step

    def _run_step(self, record: dict, step: dict) -> None:
        from ...results.analysis.refine import moved, stored_step
        reference = step["reference"]
        self._add(_levels_of(record, reference), reference)
        self._add(step["levels"], step["label"])
        self.session.say(f"tune: refining {step['knob']}: {step['knob']}={step['level']} "
                         f"({step['label']}) against the best so far ({reference})")
        first, count = step["first_block"], step["blocks"]
        run_pair_blocks(self.session, range(first, first + count),
                        (reference, step["label"]), "refine")
        vs = stored_step(self.store, self.run_id, self.study, step["label"], reference)
        step["moved"] = moved(vs)
        if step["moved"]:
            record["best"], record["best_label"] = step["levels"], step["label"]
        self._save(record)

    def _add(self, levels: dict[str, str], name: str) -> str:
        spec = self.entry.spec(levels, name)
        if name in self.session.prepared.envs:
            return name
        return add_configuration(self.session, self.make(spec), spec)

    def _save(self, record: dict) -> None:
        self.store.update_run_detail(self.run_id, tune_refine=record)


def _levels_of(record: dict, label: str) -> dict[str, str]:
    """The configuration of a refinement's environment `label` (r0: the start)."""
    if label == FIRST:
        return record["start"]
    return next(s["levels"] for s in record["steps"] if s["label"] == label)
