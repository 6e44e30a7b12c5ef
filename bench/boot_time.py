#!/usr/bin/env python3
"""Measure guest boot time: QEMU start to the agent's first answer, over N boots.

    python3 bench/boot_time.py [-n 5] [--spec qemu:accel=tcg]

Prints each boot's boot-to-agent-ready seconds (and the guest's own uptime at that moment,
and the kernel staging time), the median, and how long reusing the cached image takes.
Targets: <= 15 s under TCG on a 2-core host, <= 1 s under KVM.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from virtbench.measure.environments.base import EnvSpec  # noqa: E402
from virtbench.measure.environments.qemu import Qemu  # noqa: E402
from virtbench.machinery.image import guest_image as image  # noqa: E402

TARGETS = {"tcg": 15.0, "kvm": 1.0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5, help="number of boots")
    parser.add_argument("--spec", default="qemu:accel=auto", help="environment spec")
    args = parser.parse_args()

    t0 = time.monotonic()
    info = image.build(progress=lambda m: print("  " + m, flush=True))
    first = time.monotonic() - t0
    t0 = time.monotonic()
    again = image.build()
    reuse = time.monotonic() - t0
    print(f"image {info.recipe_hash}: {'reused' if info.reused else 'built'} in {first:.2f} s"
          f"{'' if info.reused else f' (build {info.build_s:.0f} s)'}; "
          f"reuse: {reuse * 1000:.1f} ms (reused={again.reused}); "
          f"{info.size_bytes / 1e6:.0f} MB on disk")

    boots = []
    label = accel = None
    for i in range(args.n):
        env = Qemu(EnvSpec.parse(args.spec))
        try:
            env.start()
            label, accel = env.label, env.accel
            boots.append(env.boot_s)
            print(f"boot {i + 1}/{args.n} {env.label}: {env.boot_s:6.2f} s to agent ready "
                  f"(guest uptime {env.guest_uptime_at_ready or 0:.2f} s; "
                  f"kernels staged in {env.stage_s or 0:.2f} s)", flush=True)
        finally:
            t1 = time.monotonic()
            env.stop()
            stop_s = time.monotonic() - t1
        print(f"          stop: {stop_s:.2f} s")
    if boots:
        med = statistics.median(boots)
        target = TARGETS.get(accel or "", None)
        verdict = "" if target is None else (f" (target <= {target:.0f} s: "
                                             f"{'met' if med <= target else 'NOT met'})")
        print(f"{label}: median boot-to-agent-ready {med:.2f} s over {len(boots)} boots, "
              f"min {min(boots):.2f}, max {max(boots):.2f}{verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
