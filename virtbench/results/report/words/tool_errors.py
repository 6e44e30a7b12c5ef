"""A tool's own error line in a stored warning, put in words for the reader; the raw line is
kept as the warning's `detail` (the JSON report, `--verbose`). Pure.

The KVM probe (environments/qemu/vmm/kvm_probe.py) stores why KVM is not usable as QEMU's last
stderr line: "TCG, not KVM: kvm probe: QEMU failed: qemu-system-x86_64: ../../target/i386/
kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion `ret == cpu->kvm_msr_buf->nmsrs' failed." A
reader needs "KVM unusable here: QEMU's KVM probe failed (details in --verbose)". Words are
made when a run is reported, so runs stored before keep their raw line as the detail too.
"""
from __future__ import annotations

import re

from ....foundations.model import RunWarning

_KVM = re.compile(r"TCG, not KVM: kvm probe: (?P<why>.*)\Z", re.S)

# the probe's own reasons (kvm_probe.py), as a reader says them
_PROBE = ((re.compile(r"QEMU failed: .*", re.S), "QEMU's KVM probe failed (details in --verbose)"),
          (re.compile(r"guest did not boot in (?P<s>\S+ s)"),
           "the KVM probe's guest did not boot in {s}"),
          (re.compile(r"no kernel to boot (?P<fix>.*)"), "the KVM probe had no kernel to boot "
                                                         "{fix}"))


def kvm_in_words(message: str) -> str | None:
    """`message` with its KVM probe's reason in words; None when it has none."""
    m = _KVM.search(message)
    if m is None:
        return None
    why = m.group("why").strip()
    said = why
    for pattern, words in _PROBE:
        hit = pattern.fullmatch(why)
        if hit is not None:
            said = words.format(**hit.groupdict())
            break
    before = message[:m.start()]
    if not before.strip():
        return f"KVM unusable here: {said}; the guest ran under TCG"
    return f"{before}KVM unusable here: {said}"


def in_words(w: RunWarning) -> RunWarning:
    """`w` with its message in words and the raw one as its detail, when it holds a tool's
    own error line; else `w` itself."""
    if w.detail is not None:
        return w
    said = kvm_in_words(w.message)
    if said is None or said == w.message:
        return w
    return w.model_copy(update={"message": said, "detail": w.message})
