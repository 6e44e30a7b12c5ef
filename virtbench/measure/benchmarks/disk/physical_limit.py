"""The physical-limit check: a disk figure above what the device under test can move.

The device that bounds a figure is the one the data must cross:
- native (the scratch directory on the host): the host block device under it;
- a virtual disk on any bus (virtio-blk, virtio-scsi, AHCI, IDE, NVMe): not its emulated link
  (QEMU moves a virtual disk's data at memory speed whatever link it reports) but the host
  device behind its backing file (`env.scratch_backing()`), found through findmnt and
  /sys/class/block, following loop devices to their backing file and device-mapper devices
  to the disks below them.

A device is rated from sysfs facts: SATA link speed (sata_spd), ATA transfer mode (xfer_mode,
as libata's sysfs spells it: XFER_UDMA_6; else the mode hdparm -I marks with *), PCIe link of an NVMe, USB speed. No rating (a
virtio disk of a host that is itself a guest, tmpfs, a stacked device of unknown parts) means
no check. When a figure exceeds the rating, one "physical-limit" warning per environment and
benchmark names the device, its rating, and the cache that most likely served the data: the
cache mode actually in use on the virtual disk (`env.scratch_cache_mode()`).
Where an environment declares that O_DIRECT is not honoured (capability `direct_io`, e.g.
gVisor's sentry), every cache=out figure is flagged whatever the rating.
"""
from __future__ import annotations

import re
import threading
import weakref
from dataclasses import dataclass
from typing import Callable

# Runs where the device is seen (in the environment, or on the host for a backing file):
# $1 is a directory or file (its file system's device is used) or a block device.
DEVICE_FACTS_SCRIPT = r"""
t="$1"
if [ -b "$t" ]; then src="$t"; else src=$(findmnt -n -o SOURCE -T "$t" 2>/dev/null | head -n1); fi
echo "source=$src"
[ -b "$src" ] || exit 0
b=$(basename "$(readlink -f "$src")")
s=/sys/class/block/$b
if [ -e "$s/partition" ]; then b=$(basename "$(dirname "$(readlink -f "$s")")"); s=/sys/class/block/$b; fi
echo "disk=$b"
d=$(readlink -f "$s")
echo "sysfs=$d"
for f in queue/rotational device/model device/vendor loop/backing_file dm/name; do
  [ -r "$s/$f" ] && echo "$f=$(tr -s ' ' < "$s/$f" | sed 's/ *$//')"
done
for x in "$s"/slaves/*; do [ -e "$x" ] && echo "slave=$(basename "$x")"; done
p=$(readlink -f "$s/device" 2>/dev/null)
while [ -n "$p" ] && [ "$p" != / ] && [ "$p" != /sys ] && [ "$p" != /sys/devices ]; do
  [ -e "$p/driver" ] && echo "driver=$(basename "$(readlink "$p/driver")")"
  [ -r "$p/speed" ] && [ -r "$p/idVendor" ] && echo "usb_speed=$(cat "$p/speed")"
  [ -r "$p/current_link_speed" ] && echo "pcie_speed=$(cat "$p/current_link_speed")" \
    && echo "pcie_width=$(cat "$p/current_link_width" 2>/dev/null)"
  p=$(dirname "$p")
done
a=$(echo "$d" | grep -o '/ata[0-9]*/' | head -n1 | tr -d /)
if [ -n "$a" ]; then
  n=${a#ata}
  [ -r /sys/class/ata_link/link$n/sata_spd ] && echo "sata_spd=$(cat /sys/class/ata_link/link$n/sata_spd)"
  for x in /sys/class/ata_device/dev$n.*/xfer_mode; do [ -r "$x" ] && echo "xfer_mode=$(cat "$x")" && break; done
  command -v hdparm >/dev/null 2>&1 && hdparm -I "/dev/$b" 2>/dev/null | grep -m1 'DMA:' | sed 's/^[[:space:]]*DMA:/hdparm_dma=/'
fi
exit 0
"""

VIRTUAL_DRIVERS = ("virtio_blk", "virtio_scsi", "virtio-pci", "vbd", "xen_blkfront",
                   "vmw_pvscsi", "hv_storvsc", "nvme-vfio")
VIRTUAL_MODELS = re.compile(r"QEMU|VBOX|VMware|Virtual|Xen|Msft", re.I)
STACKED = re.compile(r"^(loop|dm-|md|zram|nbd|rbd|drbd)")
# ATA transfer modes (MB/s). libata's sysfs xfer_mode says XFER_UDMA_6, its log says
# UDMA/133: both are read. UDMA 0..7, multiword DMA 0..4, single-word DMA 0..2, PIO 0..6.
UDMA_MB_S = (16.7, 25.0, 33.3, 44.4, 66.7, 100.0, 133.3, 150.0)
MWDMA_MB_S = (4.2, 13.3, 16.7, 20.0, 25.0)
SWDMA_MB_S = (2.1, 4.2, 8.3)
PIO_MB_S = (3.3, 5.2, 8.3, 11.1, 16.7, 20.0, 25.0)
# PCIe payload rate per lane (MB/s) by transfer rate (GT/s), after line encoding
PCIE_LANE_MB_S = {2.5: 250.0, 5.0: 500.0, 8.0: 984.6, 16.0: 1969.2, 32.0: 3938.5, 64.0: 7877.0}


@dataclass(frozen=True)
class RatedSpeed:
    """The most a device can move, as its interface is rated; None = unknown."""

    mb_s: float | None
    source: str                 # what the figure is, e.g. "SATA link 3.0 Gbps (SATA/300)"
    virtual: bool = False       # the device is emulated/paravirtual
    device: str = ""            # "sda"


def xfer_mode_mb_s(mode: str) -> float | None:
    """An ATA transfer mode as libata names it (XFER_UDMA_6, XFER_MW_DMA_2, XFER_PIO_4 in
    sysfs; UDMA/133, MWDMA2, PIO4 in its log) -> MB/s; None for anything else (pure)."""
    mode = mode.strip().upper()
    m = re.fullmatch(r"XFER_(UDMA|MW_DMA|SW_DMA|PIO)_(\d)", mode)
    if m:
        table = {"UDMA": UDMA_MB_S, "MW_DMA": MWDMA_MB_S, "SW_DMA": SWDMA_MB_S,
                 "PIO": PIO_MB_S}[m.group(1)]
        i = int(m.group(2))
        return table[i] if i < len(table) else None
    if mode == "XFER_PIO_SLOW":
        return PIO_MB_S[0]
    m = re.fullmatch(r"UDMA/(\d+)", mode)
    if m:
        rates = {16: 16.7, 25: 25.0, 33: 33.3, 44: 44.4, 66: 66.7, 100: 100.0, 133: 133.3}
        return rates.get(int(m.group(1)))
    m = re.fullmatch(r"(MWDMA|PIO)(\d)", mode)
    if m:
        table = MWDMA_MB_S if m.group(1) == "MWDMA" else PIO_MB_S
        i = int(m.group(2))
        return table[i] if i < len(table) else None
    return None


def hdparm_active_dma(text: str) -> str | None:
    """The mode hdparm -I marks active (`*udma5`) on its `DMA:` line (or a facts line holding
    that line's modes) -> libata's name for it (XFER_UDMA_5); None when none is marked."""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("DMA:"):
            line = line[4:]
        for word in line.split():
            m = re.fullmatch(r"\*(udma|mdma|sdma)(\d)", word)
            if m:
                kind = {"udma": "UDMA", "mdma": "MW_DMA", "sdma": "SW_DMA"}[m.group(1)]
                return f"XFER_{kind}_{m.group(2)}"
    return None


def parse_device_facts(text: str) -> dict[str, list[str]]:
    """DEVICE_FACTS_SCRIPT's key=value lines -> key -> values (in order)."""
    facts: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        if eq and key.strip():
            facts.setdefault(key.strip(), []).append(value.strip())
    return facts


def rated_speed(facts: dict[str, list[str]]) -> RatedSpeed:
    """The interface rating of the device `facts` describe (pure)."""
    first = {k: v[0] for k, v in facts.items() if v}
    disk = first.get("disk", "")
    if not disk:
        return RatedSpeed(None, f"no block device behind {first.get('source') or 'the path'}")
    drivers = facts.get("driver", [])
    model = " ".join(filter(None, (first.get("device/vendor"), first.get("device/model"))))
    virtual = (any(d in VIRTUAL_DRIVERS for d in drivers) or bool(VIRTUAL_MODELS.search(model))
               or first.get("device/vendor") == "0x1af4")
    what = disk + (f" ({model})" if model else "")
    if STACKED.match(disk):
        below = first.get("loop/backing_file") or ", ".join(facts.get("slave", []))
        return RatedSpeed(None, f"{what} is a stacked device{' over ' + below if below else ''}"
                                "; its rating is that of what lies below", virtual, disk)
    spd = first.get("sata_spd", "")
    m = re.match(r"([0-9.]+) Gbps", spd)
    if m:   # SATA's 8b/10b: 3.0 Gbps -> 300 MB/s ("SATA/300")
        gbps = float(m.group(1))
        return RatedSpeed(gbps * 100, f"{what}: SATA link {spd} (SATA/{gbps * 100:.0f})",
                          virtual, disk)
    xfer = first.get("xfer_mode", "")
    if xfer_mode_mb_s(xfer) is None:
        xfer = hdparm_active_dma(first.get("hdparm_dma", "")) or xfer
    if xfer_mode_mb_s(xfer) is not None:
        return RatedSpeed(xfer_mode_mb_s(xfer), f"{what}: ATA transfer mode {xfer}", virtual, disk)
    m = re.match(r"([0-9.]+) GT/s", first.get("pcie_speed", ""))
    if m and disk.startswith("nvme"):
        gts = float(m.group(1))
        try:
            width = int(first.get("pcie_width", "1") or 1)
        except ValueError:
            width = 1
        lane = PCIE_LANE_MB_S.get(gts)
        if lane:
            return RatedSpeed(lane * width, f"{what}: PCIe {gts:g} GT/s x{width}", virtual, disk)
    usb = first.get("usb_speed", "")
    if usb.isdigit():
        mbit = int(usb)
        rate = {12: 1.5, 480: 60.0}.get(mbit, mbit / 10)   # >= 5000: 8b/10b or better
        return RatedSpeed(rate, f"{what}: USB {mbit} Mbit/s", virtual, disk)
    if virtual:
        return RatedSpeed(None, f"{what} is a virtual device with no rated link speed", True, disk)
    return RatedSpeed(None, f"{what}: no interface rating in sysfs", False, disk)


def below(facts: dict[str, list[str]]) -> str | None:
    """What a stacked device lies on: a loop device's backing file, a device-mapper or md
    device's first member (/dev/NAME); None for anything else (pure)."""
    disk = (facts.get("disk") or [""])[0]
    if not STACKED.match(disk):
        return None
    backing = (facts.get("loop/backing_file") or [""])[0]
    if backing:
        return backing.removesuffix(" (deleted)")
    slaves = facts.get("slave") or []
    return f"/dev/{slaves[0]}" if slaves else None


def host_device_facts(path: str, run: Callable[[str], str],
                      depth: int = 4) -> dict[str, list[str]]:
    """Facts of the host block device holding `path`, through loop and dm layers.
    `run(path)` returns DEVICE_FACTS_SCRIPT's output for a path (see on_host)."""
    facts = parse_device_facts(run(path))
    for _ in range(depth):
        nxt = below(facts)
        if nxt is None:
            break
        facts = parse_device_facts(run(nxt))
    return facts


def on_host(host) -> Callable[[str], str]:
    """DEVICE_FACTS_SCRIPT run for a path through a host executor (an environment's `host`)."""
    return lambda path: host.run(["sh", "-c", DEVICE_FACTS_SCRIPT, "sh", path],
                                 timeout=60).stdout


def cause(cache_mode: str | None, bench_cache: str) -> str:
    """The cache that most likely served data faster than the device (pure).
    `cache_mode`: the virtual disk's host cache mode in use (None: no virtual disk);
    `bench_cache`: the benchmark's own cache=in|out."""
    if cache_mode in ("writeback", "unsafe"):
        return f"served from the host page cache (cache={cache_mode})"
    if cache_mode == "writethrough":
        return ("served from the host page cache (cache=writethrough: reads are cached on the "
                "host, writes reach the device)")
    if cache_mode is not None:          # none, directsync: O_DIRECT on the host
        guest = "the guest's page cache (cache=in)" if bench_cache == "in" else \
            "the device's own write cache or never-written (sparse) blocks of the image"
        return f"the host page cache is bypassed (cache={cache_mode}), so {guest} served it"
    if bench_cache == "in":
        return "served from the page cache (cache=in), not the device"
    return ("served from the page cache (direct I/O not honoured by the file system?) or "
            "the device's own write cache")


def limit_warning(rates: dict[str, float], rated: RatedSpeed | None, cache_mode: str | None,
                  bench_cache: str = "out", tolerance: float = 0.05) -> str | None:
    """One warning naming every MB/s figure above the rating, or None (pure)."""
    if rated is None or rated.mb_s is None:
        return None
    over = {k: v for k, v in rates.items() if v > rated.mb_s * (1 + tolerance)}
    if not over:
        return None
    host = "host " if cache_mode is not None else ""
    figures = ", ".join(f"{k} = {v:.1f} MB/s" for k, v in over.items())
    return (f"{figures} exceeds {host}device {rated.device or '?'} limit "
            f"({rated.mb_s:.0f} MB/s, {rated.source}): {cause(cache_mode, bench_cache)}")


def cache_warning(rates: dict[str, float], direct_io_reason: str) -> str | None:
    """One warning naming every MB/s figure of a benchmark meant to bypass the page cache
    (cache=out) in an environment whose capabilities say O_DIRECT is not honoured there:
    whatever the device's rating, the figures are the cache's, not the device's (pure)."""
    if not rates:
        return None
    figures = ", ".join(f"{k} = {v:.1f} MB/s" for k, v in rates.items())
    return (f"{figures} measured through a page cache, not a device speed: "
            f"{direct_io_reason}")


class LimitCheck:
    """Warns at most once per environment and benchmark; the host device behind a virtual
    disk is rated once per environment."""

    def __init__(self):
        self._warned: dict[str, weakref.WeakSet] = {}
        self._host: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def rated(self, env, guest_facts: Callable[[], dict[str, list[str]]]) -> RatedSpeed | None:
        """The limit for `env`'s scratch: the host device behind a virtual disk, or the
        device the environment sees itself (native)."""
        backing = env.scratch_backing()
        if backing is None:
            rated = rated_speed(guest_facts())
            return None if rated.virtual else rated
        with self._lock:
            if env not in self._host:
                self._host[env] = rated_speed(host_device_facts(backing, on_host(env.host)))
            return self._host[env]

    def check(self, env, bench: str, rates: dict[str, float], bench_cache: str,
              guest_facts: Callable[[], dict[str, list[str]]]) -> list[tuple[str, str]]:
        if not rates:
            return []
        scope = env.instance_of or env          # a group's instances warn once between them
        with self._lock:
            if scope in self._warned.setdefault(bench, weakref.WeakSet()):
                return []
        direct = env.capabilities().direct_io
        if not direct and bench_cache == "out":   # a sandbox's own cache serves O_DIRECT
            text = cache_warning(rates, direct.reason)
        else:
            text = limit_warning(rates, self.rated(env, guest_facts), env.scratch_cache_mode(),
                                 bench_cache)
        if text is None:
            return []
        with self._lock:
            if scope in self._warned[bench]:
                return []
            self._warned[bench].add(scope)
        return [("physical-limit", text)]


LIMITS = LimitCheck()
