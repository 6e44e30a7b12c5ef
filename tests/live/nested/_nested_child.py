"""Run by the nested kind's clean-up tests as a separate 'virtbench process'.

    python3 _nested_child.py SPEC kill|stop

Starts a nested environment and prints one JSON line per stage: {"stage": "outer", ...} once
the outer guest answers (its namespace, work directory and QEMU pid), then {"stage": "ready"}
when the inner guest's agent answers through the relay (with the outer guest's again: one
that stopped answering meanwhile was booted once more). `kill`: then sleeps until it is
killed. `stop`: then releases the inner guest as stop() does, says what is left of it in the
outer guest ({"stage": "inner-stopped"}), stops the rest and says so ({"stage": "stopped"}).
"""
import json
import sys
import time

from virtbench.measure.environments import create

# what is there of an inner guest in the outer one: its QEMU, the program that relays it,
# its work directory and namespaces
INNER_LEFT = ('echo "qemu=$(pgrep -c qemu-system)"; '
              'echo "inside=$(pgrep -c -f "[v]irtbench.environments.nested.inside")"; '
              'echo "workdirs=$(ls -d /var/tmp/virtbench/vbqemu-* 2>/dev/null | wc -l)"; '
              'echo "netns=$(ip netns list | grep -c ^vb-)"')


def inner_left(env) -> dict:
    res = env.outer.exec(["sh", "-c", INNER_LEFT], timeout=60)
    return dict(line.split("=", 1) for line in res.stdout.split())


def main():
    env = create(sys.argv[1])
    original = env.ready          # the ready step: the outer answers, the inner is not there

    def announce():
        outer = env.outer
        print(json.dumps({"stage": "outer", "netns": outer.ns.name,
                          "workdir": str(outer.workdir), "qemu_pid": outer.vmm.pid}),
              flush=True)
        return original()

    env.ready = announce
    env.start()
    outer = env.outer             # booted again if the first one stopped answering
    res = env.exec(["sh", "-c", "dmesg | grep -c 'Hypervisor detected: KVM'"], timeout=60)
    print(json.dumps({"stage": "ready", "boot_s": env.boot_s, "label": env.label,
                      "inner_kvm": res.stdout.strip(), "inner": inner_left(env),
                      "outer_boots": env.outer_boots, "notes": env.notes,
                      "outer": {"netns": outer.ns.name, "workdir": str(outer.workdir),
                                "qemu_pid": outer.vmm.pid}}), flush=True)
    if sys.argv[2] == "stop":
        env._stop_inner()
        print(json.dumps({"stage": "inner-stopped", "inner": inner_left(env)}), flush=True)
        env.stop()
        print(json.dumps({"stage": "stopped", "step_s": env.step_s}), flush=True)
        return
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
