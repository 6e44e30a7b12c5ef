"""Run by the cleanup tests as a separate 'virtbench process' that they interrupt or kill.

    python3 _guest_child.py SPEC

Starts the environment and prints one JSON line per stage: {"stage": "booting", ...} right
after QEMU is launched (with the namespace, work dir and QEMU pid), then {"stage": "ready"}
when the agent answers; then sleeps until it is signalled.
"""
import json
import sys
import time

from virtbench.environments import qemu
from virtbench.environments.base import EnvSpec


def main():
    env = qemu.Qemu(EnvSpec.parse(sys.argv[1]))
    original = env._wait_for_agent

    def announce(*args):
        print(json.dumps({"stage": "booting", "netns": env.ns.name, "workdir": str(env.workdir),
                          "qemu_pid": env.proc.pid, "loops": env._manifest.get("loops", [])}),
              flush=True)
        return original(*args)

    env._wait_for_agent = announce
    env.start()
    env.net_path()  # the remote namespace too must go
    print(json.dumps({"stage": "ready", "boot_s": env.boot_s,
                      "extra_netns": env._manifest.get("extra_netns", [])}), flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
