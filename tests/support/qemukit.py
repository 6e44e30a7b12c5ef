"""A whole cfg for qemu's build_argv (virtbench/measure/environments/qemu/cmdline/argv.py), made of
placeholders: the command-line tests change only what they test."""
from __future__ import annotations


def argv_cfg(**over) -> dict:
    base = dict(qemu="qemu-system-x86_64", accel="tcg", machine="q35", cpu="max", vcpus=1,
                mem="1G", linux="/c/vmlinuz", initrd="/c/initrd.img", root_image="/c/root.raw",
                root_label="vbroot", scratch="/w/scratch.raw", scratch_format="raw",
                cache="none", aio="threads", disk="virtio-blk", nic="virtio-net", vhost=False,
                mac="52:54:00:01:02:03", guest_addr="10.213.0.2/24", tap="tap0",
                console_log="/w/console.log", agent_socket="/w/agent.sock",
                agent_transport="virtio-serial", qmp_socket="/w/qmp.sock",
                pidfile="/w/qemu.pid", name="virtbench-vb-abc")
    base.update(over)
    return base
