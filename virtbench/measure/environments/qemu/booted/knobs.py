"""Reading the knobs back from the running QEMU (pure): the QMP commands to send, and what
their replies say of `hugepages`, `iothread`, `queues`, `cpu` and `backing`.

The replies come from QMP (qom-get on the devices and objects cmdline/argv.py names, query-iothreads,
query-block, query-cpus-fast, and HMP `info network` through human-monitor-command), the
queue counts the guest sees from sysfs (GUEST_SCRIPT). `read()` turns them into facts for the
environment's metadata; `mismatches()` says which asked-for knob did not take. Tested on
replies captured from QEMU 7.2 here (tests/fixtures/knobs/). `read_from()` sends the
queries over a QMP client (the one side effect, on the object it is given).
"""
from __future__ import annotations

import re

from .....core.errors import AgentError
from ..cmdline.argv import MEMDEV, NIC_DEV, SCRATCH_DEV

PERIPHERAL = "/machine/peripheral/"


def queries(values: dict, cpu_path: str | None) -> dict[str, tuple[str, dict]]:
    """{key: (QMP command, arguments)} to send for `values` (the environment's options);
    `cpu_path`: the first vCPU's QOM path (query-cpus-fast), None if unknown."""
    q: dict[str, tuple[str, dict]] = {
        "iothreads": ("query-iothreads", {}),
        "block": ("query-block", {}),
        "network": ("human-monitor-command", {"command-line": "info network"}),
    }
    if cpu_path:
        q["cpu_type"] = ("qom-get", {"path": cpu_path, "property": "type"})
        q["cpu_model_id"] = ("qom-get", {"path": cpu_path, "property": "model-id"})
    if values.get("hugepages") == "on":
        q["hugetlb"] = ("qom-get", {"path": f"/objects/{MEMDEV}", "property": "hugetlb"})
        q["hugetlbsize"] = ("qom-get", {"path": f"/objects/{MEMDEV}",
                                        "property": "hugetlbsize"})
    disk = values.get("disk")
    if disk == "virtio-blk":
        q["disk_iothread"] = ("qom-get", {"path": PERIPHERAL + SCRATCH_DEV,
                                          "property": "iothread"})
        q["disk_queues"] = ("qom-get", {"path": PERIPHERAL + SCRATCH_DEV,
                                        "property": "num-queues"})
    elif disk == "virtio-scsi":
        q["disk_iothread"] = ("qom-get", {"path": PERIPHERAL + "scsi0", "property": "iothread"})
    if values.get("nic") == "virtio-net":
        q["nic_mq"] = ("qom-get", {"path": PERIPHERAL + NIC_DEV, "property": "mq"})
    return q


def cpu_model(qom_type: str | None) -> str | None:
    """A CPU object's QOM type ("max-x86_64-cpu", "Skylake-Client-x86_64-cpu") -> the -cpu
    model name ("max", "Skylake-Client")."""
    if not qom_type:
        return None
    return re.sub(r"-x86_64-cpu$|-i386-cpu$", "", qom_type)


def net_queue_count(info_network: str, netdev: str = "net0") -> int | None:
    """HMP `info network` -> how many queues the netdev has (one `\\ net0: index=N,type=tap`
    line per queue)."""
    n = len(re.findall(rf"^\s*\\\s*{re.escape(netdev)}: index=\d+,", info_network, re.M))
    return n or None


def scratch_file(block: list) -> tuple[str | None, str | None]:
    """query-block -> (the scratch drive's file name, its protocol driver): a path, or
    "nbd+unix://?socket=...", or "nfs://..."."""
    for dev in block or []:
        if dev.get("device") == "scratch":
            ins = dev.get("inserted") or {}
            name = (ins.get("image") or {}).get("filename") or ins.get("file")
            proto = name.split(":", 1)[0] if name and "://" in name else "file"
            return name, proto
    return None, None


def read(replies: dict) -> dict:
    """QMP replies by key (as queries() named them; an error reply is an AgentError's text
    under the key, a string starting "error: ") -> the knobs as QEMU reports them."""
    def ok(key):
        v = replies.get(key)
        return None if isinstance(v, str) and v.startswith("error: ") else v

    got: dict = {}
    if "hugetlb" in replies:
        size = ok("hugetlbsize")
        got["hugepages"] = "on" if ok("hugetlb") is True and size else "off"
        if size:
            got["hugepage_bytes"] = size
    threads = ok("iothreads") or []
    got["iothreads"] = [t.get("id") for t in threads]
    if "disk_iothread" in replies:
        path = ok("disk_iothread") or ""
        got["iothread"] = "on" if path.rsplit("/", 1)[-1] in got["iothreads"] and path \
            else "off"
    if isinstance(ok("disk_queues"), int):
        got["disk_queues"] = ok("disk_queues")
    if isinstance(ok("network"), str):
        n = net_queue_count(ok("network"))
        if n:
            got["nic_queues"] = n
    if "nic_mq" in replies:
        got["nic_mq"] = ok("nic_mq") is True
    if ok("cpu_type"):
        got["cpu"] = cpu_model(ok("cpu_type"))
    if ok("cpu_model_id"):
        got["cpu_model_id"] = ok("cpu_model_id")
    name, proto = scratch_file(ok("block") or [])
    if name:
        got["scratch_file"] = name
        got["backing_protocol"] = proto
    return got


def read_from(qmp, values: dict) -> dict:
    """The knobs as the running QEMU reports them, through `qmp` (vmm's Qmp client): a
    command QEMU refuses reads as not taken."""
    try:
        cpus = qmp.command("query-cpus-fast")
    except AgentError:
        cpus = []
    replies = {}
    for key, (cmd, args) in queries(values, cpus[0].get("qom-path") if cpus else None).items():
        try:
            replies[key] = qmp.command(cmd, **args)
        except AgentError as exc:
            replies[key] = f"error: {exc}"
    return read(replies)


# the guest's own count of the scratch disk's and the NIC's queues ($1: block, $2: NIC)
GUEST_SCRIPT = r"""
n=0; [ -n "$1" ] && n=$(ls -d /sys/block/"$1"/mq/* 2>/dev/null | wc -l); echo "disk $n"
n=0; [ -n "$2" ] && n=$(ls -d /sys/class/net/"$2"/queues/rx-* 2>/dev/null | wc -l); echo "nic $n"
"""


def parse_guest_queues(text: str) -> dict:
    """GUEST_SCRIPT's output -> {"guest_disk_queues": n, "guest_nic_queues": m} (0s left out:
    no such device, or no blk-mq)."""
    out = {}
    for m in re.finditer(r"^(disk|nic) (\d+)$", text, re.M):
        if int(m.group(2)):
            out[f"guest_{m.group(1)}_queues"] = int(m.group(2))
    return out


BACKING_PROTOCOL = {"raw": "file", "qcow2": "file", "device": "file", "nbd": "nbd+unix",
                    "nfs": "nfs"}


def mismatches(values: dict, got: dict) -> list[str]:
    """One phrase per knob asked for that the running QEMU (or the guest) does not show."""
    out = []
    if values.get("hugepages") == "on" and got.get("hugepages") != "on":
        out.append("hugepages=on did not take: guest RAM is not on hugetlb pages")
    if values.get("iothread") == "on" and got.get("iothread") != "on":
        out.append(f"iothread=on did not take: the scratch disk has no iothread "
                   f"(QEMU's iothreads: {got.get('iothreads') or 'none'})")
    q = values.get("queues", "auto")
    if q != "auto":
        checks = []
        if values.get("disk") == "virtio-blk":
            checks += [("disk_queues", "the scratch disk"),
                       ("guest_disk_queues", "the guest's scratch disk")]
        if values.get("nic") == "virtio-net":
            checks += [("nic_queues", "the NIC"), ("guest_nic_queues", "the guest's NIC")]
        for key, where in checks:
            if key in got and got[key] != q:
                out.append(f"queues={q} did not take: {where} has {got[key]}")
    want_cpu = values.get("cpu")
    if want_cpu not in (None, "auto") and got.get("cpu") not in (None, want_cpu):
        out.append(f"cpu={want_cpu} did not take: QEMU's vCPU is {got['cpu']}")
    proto = BACKING_PROTOCOL.get(values.get("backing"))
    if proto and got.get("backing_protocol") not in (None, proto):
        out.append(f"backing={values['backing']} did not take: the scratch drive is "
                   f"{got['scratch_file']}")
    return out
