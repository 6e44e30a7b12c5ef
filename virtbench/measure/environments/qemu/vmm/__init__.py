"""The QEMU program and one running QEMU: which binary runs (binary, version), whether KVM
works with it here (kvm_probe), the process virtbench runs and its QMP monitor (process, qmp),
and the hygiene of QEMU processes: what dead runs left, whether one lives, why one went away
(hygiene)."""
