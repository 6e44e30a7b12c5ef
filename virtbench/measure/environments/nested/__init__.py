"""`nested`: benchmarks in an inner guest that virtbench boots inside an outer guest it boots
first, with the virtualization extensions exposed to the outer one: what a guest inside a
cloud VM, a Kata container inside a VM, or a CI job's VM inside a VM costs.

    nested[:accel=auto|kvm|tcg,vcpus=1,mem=1G,disk=virtio-blk|...,nic=virtio-net|...,
           cache=none|...,aio=threads|native|io_uring,scratch=4G,
           outer_accel=auto|kvm|tcg,outer_cpu=auto,outer_vcpus=2,outer_mem=2G,
           outer_cache=none|...,boot_timeout=600]

The outer guest is the qemu kind booted from the host image (image/host_image.py: QEMU, perf
and virtbench inside), `-cpu host` under KVM when the host can nest (svm or vmx, and
kvm_amd's or kvm_intel's `nested` parameter on), else `-cpu EPYC,+svm` under TCG (emulated
AMD-V); support.py decides, before the label is used: nested-tcg+kvm here. Inside it the
virtbench installed there boots the inner guest as the qemu kind does (the KVM probe in the
outer guest first) and relays its agent over a virtio-serial port of the outer guest to this
host (inside.py, relay.py): benchmarks run through the inner guest's agent like any guest's.
The inner guest's scratch disk is the outer guest's virtio-blk disk passed through, so disk
benchmarks cross both layers' virtual disks. No network path reaches the inner guest from
this host: network benchmarks are declared `cannot`.

Modules: support (can this host nest; each layer's accelerator, pure), options (the options,
each layer's qemu spec), environment (class Nested: the life-cycle steps), inside (the
program in the outer guest), relay (the byte relay it runs).
"""
from .environment import Nested

__all__ = ["Nested"]
