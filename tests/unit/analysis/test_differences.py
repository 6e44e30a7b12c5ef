"""The fact finder (virtbench/results/analysis/facts/differences.py), table-driven, on the metadata a real
run stored here (tests/fixtures/differences/quick-run-2026-11-28.json: native and a TCG
guest of studies/quick.toml) with values changed the way another QEMU, another guest
Linux, UEFI firmware or another host would change them."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from virtbench.results.analysis.facts.differences import differ, host_facts, kind_words, pair

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "differences" / \
    "quick-run-2026-11-28.json"
STORED = json.loads(FIXTURE.read_text())
NATIVE, QEMU = STORED["environments"]
HOST = host_facts(STORED["run"], STORED["environments"])
Q10_BINARY = "/root/.cache/virtbench/qemu/bookworm-backports/usr/bin/qemu-system-x86_64"


def guest(spec_extra: str = "", options: dict | None = None, **metadata) -> dict:
    """The stored guest with `metadata` keys set (None: removed) and options added."""
    env = copy.deepcopy(QEMU)
    if spec_extra:
        env["spec"] += "," + spec_extra
    env["options"].update(options or {})
    for key, value in metadata.items():
        if value is None:
            env["metadata"].pop(key, None)
        else:
            env["metadata"][key] = value
    return env


def q10(spec_extra: str = "", **metadata) -> dict:
    """The guest run with the backports QEMU (`qemu:binary=...,name=q10`)."""
    extra = dict(item.split("=") for item in spec_extra.split(",") if item)
    return guest(",".join(filter(None, [f"binary={Q10_BINARY},name=q10", spec_extra])),
                 {"binary": Q10_BINARY, "name": "q10", **extra},
                 qemu_version="10.0.2", qemu_binary=Q10_BINARY, **metadata)


def test_the_fixture_is_the_stored_run_it_says():
    assert NATIVE["kind"] == "native" and QEMU["kind"] == "qemu"
    assert QEMU["metadata"]["qemu_version"] == "7.2.22"
    assert QEMU["metadata"]["accel"] == "tcg"
    assert HOST["cpu_model"] == "AMD EPYC" and HOST["hostname"] == "vm"


CASES = [
    # (case, reference, environment, the facts' words, recorded on one side only)
    ("equal", QEMU, copy.deepcopy(QEMU), [], []),
    # the option that made a fact of the table (binary=, firmware=, linux=) is not said again
    ("one QEMU: its version and binary are one change",
     guest(qemu_binary="/usr/bin/qemu-system-x86_64"), q10(),
     ["QEMU 7.2.22 → 10.0.2",
      f"QEMU binary /usr/bin/qemu-system-x86_64 → {Q10_BINARY}"], []),
    ("a binary read from the argv of a run stored before qemu_binary", QEMU, q10(),
     ["QEMU 7.2.22 → 10.0.2", f"QEMU binary /usr/bin/qemu-system-x86_64 → {Q10_BINARY}"], []),
    ("several: QEMU and firmware",
     guest(firmware="seabios", qemu_binary="/usr/bin/qemu-system-x86_64"),
     q10(firmware="ovmf"),
     ["QEMU 7.2.22 → 10.0.2", f"QEMU binary /usr/bin/qemu-system-x86_64 → {Q10_BINARY}",
      "firmware seabios → ovmf"], []),
    ("guest Linux from another suite",
     guest(guest_linux_suite="bookworm"),
     guest("linux=bookworm-backports", {"linux": "bookworm-backports"},
           guest_kernel="6.12.95+bpo-cloud-amd64", guest_linux_suite="bookworm-backports",
           image_recipe="0123456789abcdef"),
     ["guest Linux 6.1.0-50-amd64 → 6.12.95+bpo-cloud-amd64",
      "guest Linux suite bookworm → bookworm-backports",
      "image recipe f85750fb42756ea8 → 0123456789abcdef"], []),
    ("missing on one side: recorded apart, never a difference",
     QEMU, guest(firmware="seabios", qemu_version_qmp="7.2.22"), [], ["QEMU (QMP)", "firmware"]),
    ("a tuning and a knob as read back; the scratch path is no fact",
     QEMU, guest(tunings={**QEMU["metadata"]["tunings"], "clocksource": "hpet"},
                 knobs_read={**QEMU["metadata"]["knobs_read"], "scratch_file": "/x/y.raw",
                             "disk_queues": 2}),
     ["disk_queues (read back) 1 → 2", "clocksource (read back) tsc → hpet"], []),
    ("the accelerator and the guest CPU",
     QEMU, guest(accel="kvm", cpu_model="AMD EPYC"),
     ["accelerator tcg → kvm", "guest CPU QEMU TCG CPU version 2.5+ → AMD EPYC"], []),
]


@pytest.mark.parametrize("case, reference, environment, words, unrecorded", CASES,
                         ids=[c[0] for c in CASES])
def test_the_facts_that_differ(case, reference, environment, words, unrecorded):
    facts, missing = differ(reference, environment, HOST, HOST)
    assert [f.words for f in facts] == words
    assert missing == unrecorded


def test_a_fact_carries_both_values_its_layer_and_its_option():
    facts, _ = differ(QEMU, q10(), HOST, HOST)
    first = facts[0]
    assert (first.key, first.name, first.layer, first.a, first.b, first.option) == (
        "qemu_version", "QEMU", "environment", "7.2.22", "10.0.2", "binary")


def test_host_facts_count_for_every_pair_and_no_option_sets_them():
    other = {**HOST, "microcode": "0x1000066", "host_kernel": "6.18.50",
             "kernels_build": "sources 2222, cc 12.2.0"}
    here = {**HOST, "microcode": "0x1000065", "kernels_build": "sources 1111, cc 12.2.0"}
    facts, _ = differ(QEMU, guest(host_kernel=None), here, other)
    assert [(f.name, f.layer, f.option) for f in facts] == [
        ("host kernel", "host", None), ("microcode", "host", None),
        ("virtbench's kernels", "host", None)]
    # bare metal reads the host from its own fingerprint
    native_b = copy.deepcopy(NATIVE)
    native_b["metadata"]["microcode"] = "0x2"
    facts, _ = differ({**NATIVE, "metadata": {**NATIVE["metadata"], "microcode": "0x1"}},
                      native_b)
    assert [f.words for f in facts] == ["microcode 0x1 → 0x2"]


def test_a_guest_against_bare_metal_says_the_kinds_and_lists_no_guest_only_fact():
    p = pair("qemu-tcg", "native", NATIVE, QEMU, HOST, HOST)
    assert p.kinds == "a QEMU guest (TCG) vs bare metal"
    assert p.facts == [] and p.unrecorded == [] and p.changes == 0
    assert p.line == "qemu-tcg vs native: a QEMU guest (TCG) vs bare metal"
    # ...but a host fact that differs (another run's bare metal) is still said
    p = pair("qemu-tcg", "native", NATIVE, guest(host_kernel="6.19"), HOST, HOST)
    assert [f.words for f in p.facts] == ["host kernel 6.18.44-fc-v595 → 6.19"]


def test_two_kinds_of_qemu_guest_compare_their_qemu_facts_not_their_options():
    libvirt = guest(qemu_version="10.0.2")
    libvirt.update(kind="libvirt", spec="libvirt:uri=qemu:///system",
                   options={"uri": "qemu:///system"})
    facts, missing = differ(QEMU, libvirt, HOST, HOST)
    assert [f.words for f in facts] == ["QEMU 7.2.22 → 10.0.2"]
    assert missing == []


def test_the_line_says_one_fact_per_change_and_everything_else_equal():
    p = pair("q10", "qemu", guest(qemu_binary="/usr/bin/qemu-system-x86_64"), q10(), HOST,
             HOST, separate="virtbench report R --separate > separate.toml")
    assert p.line == "q10 vs qemu: QEMU 7.2.22 → 10.0.2; everything else equal"
    assert p.changes == 1 and p.separable == ["binary"]


def test_several_changes_are_counted_and_the_separating_study_named():
    p = pair("q10", "qemu", guest(firmware="seabios"), q10("firmware=ovmf", firmware="ovmf"),
             HOST, HOST, separate="virtbench report R --separate > separate.toml")
    assert p.changes == 2 and p.separable == ["binary", "firmware"]
    assert p.line == ("q10 vs qemu: QEMU 7.2.22 → 10.0.2; firmware seabios → ovmf; everything "
                      "else equal; 2 changes at once; to separate them: virtbench report R "
                      "--separate > separate.toml")


def test_equal_and_unrecorded_in_the_line():
    assert pair("twin", "qemu", QEMU, copy.deepcopy(QEMU)).line == \
        "twin vs qemu: every recorded fact equal"
    p = pair("b", "a", QEMU, guest(firmware="ovmf"))
    assert p.line == "b vs a: every recorded fact equal; 1 fact(s) recorded on one side only"


def test_more_changes_than_the_line_shows_point_to_wide():
    env = guest(accel="kvm", machine="pc", firmware="x", cpu_model="EPYC", host_thp="never")
    p = pair("b", "a", guest(firmware="y"), env)
    assert p.changes == 5 and "and 2 more (--wide)" in p.line


def test_kind_words():
    assert kind_words(NATIVE) == "bare metal"
    assert kind_words(QEMU) == "a QEMU guest (TCG)"
    assert kind_words({"kind": "native", "spec": "native:instances=2"}) == \
        "2 instances of bare metal"
    assert kind_words({"kind": "container", "spec": "container",
                       "metadata": {"engine": "podman", "runtime": "runc"}}) == \
        "a podman container (runc)"


def test_an_instance_count_written_in_one_spec_stands_against_the_default():
    twin = {**NATIVE, "spec": "native:instances=2"}
    facts, _ = differ(NATIVE, twin)
    assert [f.words for f in facts] == ["instances 1 → 2"]


def test_an_option_resolved_to_an_empty_default_is_its_default_not_unrecorded():
    # today's qemu kind resolves binary= to "" (the system's QEMU): against q10's path that
    # is one change, not a fact "recorded on one side only" (found on the live versions run)
    reference = guest(options={"binary": ""}, qemu_binary="/usr/bin/qemu-system-x86_64")
    p = pair("q10", "qemu", reference, q10(), HOST, HOST)
    assert p.line == "q10 vs qemu: QEMU 7.2.22 → 10.0.2; everything else equal"
    assert p.unrecorded == [] and p.changes == 1
    # the option itself is not said beside the QEMU facts it made (one change, said once)
    assert [f.key for f in p.facts] == ["qemu_version", "qemu_binary"]
