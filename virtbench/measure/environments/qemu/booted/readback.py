"""Reading the guest tunings back (pure): one shell script the agent runs, and parsers of
what it prints (sysfs files, /proc/timer_list, ethtool -k / -c, dmesg).

The script prints sections, each after a line `@@NAME`; read_all() turns them into
{tuning: value as the guest reports it}, in the tunings' own words (tick=periodic,
iosched=none, offloads=off, napi_tx=off, e1000_itr=3000...). The parsers are tested on
output captured from a virtbench guest (tests/fixtures/tunings/).
"""
from __future__ import annotations

import re

CLOCKSOURCE_DIR = "/sys/devices/system/clocksource/clocksource0"

SCRIPT = r"""
echo @@clocksource; cat {cs}/current_clocksource
echo @@available_clocksource; cat {cs}/available_clocksource
echo @@timer_list; grep -E '^ *\.(nohz_mode|nohz|hres_active) ' /proc/timer_list
echo @@cmdline; cat /proc/cmdline
if [ -n "$1" ]; then echo @@scheduler; cat "/sys/block/$1/queue/scheduler"; fi
if [ -n "$2" ]; then
  echo @@features; ethtool -k "$2" 2>&1
  echo @@coalesce; ethtool -c "$2" 2>&1
fi
echo @@napi_tx; cat /sys/module/virtio_net/parameters/napi_tx 2>/dev/null
echo @@e1000; dmesg 2>/dev/null | grep 'Interrupt Throttling Rate'
exit 0
""".format(cs=CLOCKSOURCE_DIR)


def script_argv(block: str | None, nic: str | None) -> list[str]:
    """The agent command that prints every section (the scratch disk's name under
    /sys/block and the guest NIC, either may be None)."""
    return ["sh", "-c", SCRIPT, "sh", block or "", nic or ""]


def sections(text: str) -> dict[str, str]:
    """`@@NAME` lines split the script's output into {NAME: text}."""
    out: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("@@"):
            current = line[2:].strip()
            out[current] = []
        elif current is not None:
            out[current].append(line)
    return {k: "\n".join(v) + ("\n" if v else "") for k, v in out.items()}


def parse_clocksource(text: str) -> str | None:
    """current_clocksource ("tsc\\n") -> "tsc"."""
    words = text.split()
    return words[0] if words else None


def parse_timer_list(text: str) -> dict[str, list[int]]:
    """/proc/timer_list (whole, or only its `.nohz_mode`/`.nohz`/`.hres_active` lines) ->
    {"nohz_mode": [per CPU], "hres_active": [per CPU]}. Linux 6.1 prints `.nohz_mode` (0 =
    NOHZ_MODE_INACTIVE); newer kernels (6.12 here) print the flag `.nohz` instead (0: the
    tick never stopped), read into the same list: 0 means periodic in both."""
    out: dict[str, list[int]] = {"nohz_mode": [], "hres_active": []}
    for m in re.finditer(r"^\s*\.(nohz_mode|nohz|hres_active)\s*:\s*(\d+)", text, re.M):
        key = "hres_active" if m.group(1) == "hres_active" else "nohz_mode"
        out[key].append(int(m.group(2)))
    return out


def tick_mode(timer_list: dict[str, list[int]]) -> str | None:
    """periodic when no CPU's tick ever went tickless (nohz_mode 0 = NOHZ_MODE_INACTIVE),
    else dynamic."""
    modes = timer_list.get("nohz_mode") or []
    if not modes:
        return None
    return "periodic" if all(m == 0 for m in modes) else "dynamic"


def highres_state(timer_list: dict[str, list[int]]) -> str | None:
    active = timer_list.get("hres_active") or []
    if not active:
        return None
    return "on" if all(a == 1 for a in active) else "off"


def parse_scheduler(text: str) -> str | None:
    """/sys/block/DEV/queue/scheduler ("mq-deadline bfq [kyber] none") -> "kyber"."""
    m = re.search(r"\[([^\]]+)\]", text)
    return m.group(1) if m else None


def parse_ethtool_features(text: str) -> dict[str, bool]:
    """`ethtool -k` -> {feature: on}; `[fixed]` and `[requested on]` notes are dropped."""
    out = {}
    for m in re.finditer(r"^\s*([a-z0-9_-]+):\s+(on|off)\b", text, re.M):
        out[m.group(1)] = m.group(2) == "on"
    return out


OFFLOADS = ("tcp-segmentation-offload", "generic-segmentation-offload",
            "generic-receive-offload")


def offloads_state(features: dict[str, bool]) -> str | None:
    """"on"/"off" when tso, gso and gro agree, else e.g. "tso=off,gso=on,gro=on"."""
    if not all(f in features for f in OFFLOADS):
        return None
    states = [features[f] for f in OFFLOADS]
    if all(states) or not any(states):
        return "on" if states[0] else "off"
    return ",".join(f"{short}={'on' if s else 'off'}"
                    for short, s in zip(("tso", "gso", "gro"), states))


def parse_ethtool_coalesce(text: str) -> dict[str, int | None] | None:
    """`ethtool -c` -> {"rx-usecs": 0, "rx-frames": 1, ..., "rx-usecs-irq": None (n/a)};
    None when the driver has no coalescing settings ("Operation not supported")."""
    if "Coalesce parameters" not in text:
        return None
    out: dict[str, int | None] = {}
    for m in re.finditer(r"^([a-z-]+):\s+(\d+|n/a)\s*$", text, re.M):
        out[m.group(1)] = None if m.group(2) == "n/a" else int(m.group(2))
    return out


def coalesce_us(coalesce: dict[str, int | None] | None) -> int | str | None:
    """The rx/tx usecs as one value when they agree, else "rx=N,tx=M"."""
    if not coalesce:
        return None
    rx, tx = coalesce.get("rx-usecs"), coalesce.get("tx-usecs")
    return rx if rx == tx else f"rx={rx},tx={tx}"


def parse_module_bool(text: str) -> str | None:
    """/sys/module/M/parameters/P of a bool ("Y"/"N") -> "on"/"off"."""
    word = text.strip()
    return {"Y": "on", "N": "off", "1": "on", "0": "off"}.get(word)


def parse_e1000_itr(dmesg: str) -> int | str | None:
    """The e1000 driver's own report of InterruptThrottleRate (its parameters have no
    sysfs files) -> the value as the module parameter gives it; None when the driver
    printed nothing (no parameter: its default, 3). The last report wins."""
    value = None
    for line in dmesg.splitlines():
        if "Interrupt Throttling Rate" not in line:
            continue
        m = re.search(r"set to (\d+)\s*$", line)
        if m:
            value = int(m.group(1))
        elif "turned off" in line:
            value = 0
        elif "dynamic conservative mode" in line:
            value = 3
        elif "dynamic mode" in line:
            value = 1
        elif "simplified" in line:
            value = 4
        elif "Invalid" in line:
            m = re.search(r"\((-?\d+)\)", line)
            value = f"invalid ({m.group(1)})" if m else "invalid"
    return value


def read_all(text: str, nic_model: str | None = None) -> dict:
    """The script's output -> {tuning: read-back value}. A tuning the guest cannot report
    (no such device, no such module) is left out."""
    sec = sections(text)
    got: dict = {}
    timers = parse_timer_list(sec.get("timer_list", ""))
    for name, value in (("tick", tick_mode(timers)), ("highres", highres_state(timers)),
                        ("clocksource", parse_clocksource(sec.get("clocksource", "")))):
        if value is not None:
            got[name] = value
    if "available_clocksource" in sec:
        got["pmtimer"] = "on" if "acpi_pm" in sec["available_clocksource"].split() else "off"
    if sec.get("scheduler"):
        got["iosched"] = parse_scheduler(sec["scheduler"])
    if "features" in sec:
        state = offloads_state(parse_ethtool_features(sec["features"]))
        if state is not None:
            got["offloads"] = state
    if nic_model == "virtio-net":
        us = coalesce_us(parse_ethtool_coalesce(sec.get("coalesce", "")))
        if us is not None:
            got["nic_coalesce_us"] = us
        napi = parse_module_bool(sec.get("napi_tx", ""))
        if napi is not None:
            got["napi_tx"] = napi
    if nic_model == "e1000":
        itr = parse_e1000_itr(sec.get("e1000", ""))
        got["e1000_itr"] = "auto" if itr is None else itr   # no parameter: the default
    return {k: v for k, v in got.items() if v is not None}


def available_clocksources(text: str) -> str:
    return sections(text).get("available_clocksource", "").strip()
