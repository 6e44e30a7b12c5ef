"""A tool's own error line in a warning, put in words; the raw line kept as its detail."""
from __future__ import annotations

from virtbench.results.report.words.tool_errors import in_words, kvm_in_words
from virtbench.foundations.model import RunWarning


def _stored(fixture_text) -> str:
    text = fixture_text("kvm", "probe", "environment_note_qemu_assertion.txt")
    return next(line for line in text.splitlines() if not line.startswith("## "))


def test_the_kvm_probes_qemu_assertion_is_said_in_words_and_kept_as_the_detail(fixture_text):
    raw = _stored(fixture_text)
    assert "Assertion `ret == cpu->kvm_msr_buf->nmsrs' failed." in raw     # the real line
    w = in_words(RunWarning(environment="qemu-tcg/virtio-blk/virtio-net",
                            kind="environment_note", message=raw))
    assert w.message == ("KVM unusable here: QEMU's KVM probe failed (details in --verbose); "
                         "the guest ran under TCG")
    assert w.detail == raw
    assert w.severity == "note" and w.environment == "qemu-tcg/virtio-blk/virtio-net"
    assert in_words(w) is w                     # said once: its detail is the raw line


def test_the_probes_other_reasons_in_words():
    # the forms kvm_probe.py gives, behind resolve.py's "TCG, not KVM: "
    assert kvm_in_words("TCG, not KVM: kvm probe: /dev/kvm does not exist") == \
        "KVM unusable here: /dev/kvm does not exist; the guest ran under TCG"
    assert kvm_in_words("TCG, not KVM: kvm probe: guest did not boot in 60 s") == \
        "KVM unusable here: the KVM probe's guest did not boot in 60 s; the guest ran under TCG"
    assert kvm_in_words("TCG, not KVM: kvm probe: no kernel to boot (build the guest image "
                        "first)") == ("KVM unusable here: the KVM probe had no kernel to boot "
                                      "(build the guest image first); the guest ran under TCG")


def test_a_nested_note_keeps_what_comes_before_the_probe(fixture_text):
    raw = "the outer guest runs under TCG (-cpu EPYC,+svm): " + _stored(fixture_text)
    assert kvm_in_words(raw) == ("the outer guest runs under TCG (-cpu EPYC,+svm): KVM "
                                 "unusable here: QEMU's KVM probe failed (details in --verbose)")


def test_a_message_without_a_probe_line_is_left_as_it_is():
    w = RunWarning(environment="container-podman/runc", kind="environment_note",
                   message="runc, not crun: crun: cgroups in hybrid mode not supported")
    assert kvm_in_words(w.message) is None
    assert in_words(w) is w and w.detail is None
