"""Run by the cleanup tests as a separate 'virtbench process' that they interrupt or kill.

    python3 _guest_child.py SPEC

Starts the environment and prints one JSON line per stage: {"stage": "booting", ...} right
after QEMU is launched (with the namespace, work dir and QEMU pid), then {"stage": "ready"}
when the agent answers; then sleeps until it is signalled.
"""
import json
import sys
import time

from virtbench.measure.environments import qemu
from virtbench.measure.environments.base import EnvSpec


def main():
    env = qemu.Qemu(EnvSpec.parse(sys.argv[1]))
    original = env.ready          # the ready step: QEMU runs, the agent is not there yet

    def announce():
        print(json.dumps({"stage": "booting", "netns": env.ns.name, "workdir": str(env.workdir),
                          "qemu_pid": env.vmm.pid, "loops": env.work.data.get("loops", [])}),
              flush=True)
        return original()

    env.ready = announce
    env.start()
    env.net_path()  # the remote namespace too must go
    print(json.dumps({"stage": "ready", "boot_s": env.boot_s,
                      "extra_netns": env.work.data.get("extra_netns", []),
                      "servers": {k: env.work.data[k] for k in ("nbd_pid", "nfs_pgid",
                                                                 "hugepages_added")
                                  if k in env.work.data}}), flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
