"""The metadata fingerprint of an environment, collected through its agent.

One shell script prints sections (`==name` then the raw output of a command); `parse` turns
that text into a dict. The same script runs on bare metal and in any guest.
"""
from __future__ import annotations

import re

from . import hypervisor, meminfo

SCRIPT = r"""
section() { echo "==$1"; }
section cpuinfo; cat /proc/cpuinfo 2>/dev/null
section meminfo; head -n 3 /proc/meminfo 2>/dev/null
section uname; uname -srm
section os; (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")
section nproc; nproc 2>/dev/null
section cpufreq; if [ -d /sys/devices/system/cpu/cpu0/cpufreq ]; then echo present; else echo absent; fi
section governor; cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>/dev/null
section clocksource; cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null
section virt; systemd-detect-virt 2>/dev/null
section virt_vm; systemd-detect-virt --vm 2>/dev/null
section virt_container; systemd-detect-virt --container 2>/dev/null
section container_files
for f in /.dockerenv /run/.containerenv; do [ -e $f ] && echo $f; done
[ -r /run/systemd/container ] && printf '/run/systemd/container: %s\n' "$(cat /run/systemd/container)"
section dmi; cat /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name 2>/dev/null
section dmi_fields
for f in sys_vendor product_name product_version bios_vendor board_vendor; do
  [ -r /sys/class/dmi/id/$f ] && printf '%s: %s\n' $f "$(cat /sys/class/dmi/id/$f)"
done
section xen
for f in type guest_type; do
  [ -r /sys/hypervisor/$f ] && printf '%s: %s\n' $f "$(cat /sys/hypervisor/$f)"
done
section dmesg_virt
dmesg 2>/dev/null | grep -E 'Hypervisor detected|Booting paravirtualized kernel|DMI: |DMI not present|ACPI: RSDP|Xen HVM callback' | head -n 8
section cc; cc --version 2>/dev/null | head -n 1
section python; python3 -c 'import platform; print(platform.python_version())' 2>/dev/null
section end
"""


def split_sections(text: str) -> dict[str, str]:
    sections: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("==") and re.fullmatch(r"==[a-z_]+", line.strip()):
            current = line.strip()[2:]
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    return {k: "\n".join(v).strip() for k, v in sections.items()}


def parse_cpuinfo(text: str) -> dict:
    fields: dict[str, str] = {}
    processors = 0
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip()
        if key == "processor":
            processors += 1
        fields.setdefault(key, value.strip())
    flags = fields.get("flags", "").split()
    return {
        "cpu_model": fields.get("model name"),
        "cpu_mhz": float(fields["cpu MHz"]) if "cpu MHz" in fields else None,
        "logical_cpus": processors or None,
        "cpu_flags": flags,
        # the CPU's microcode revision (absent in many guests): a host fact, like its kernel
        "microcode": fields.get("microcode"),
        # the CPUID hypervisor bit: set in every guest, whatever the hypervisor says of itself
        "hypervisor_flag": "hypervisor" in flags,
        "vmx_or_svm": "vmx" in flags or "svm" in flags,
    }


def parse(text: str) -> dict:
    """Turn the output of SCRIPT into the fingerprint dict stored with a run."""
    s = split_sections(text)
    facts = parse_cpuinfo(s.get("cpuinfo", ""))
    virt = s.get("virt") or None
    facts.update({
        "mem_bytes": meminfo.total(s.get("meminfo", "")),
        "kernel": s.get("uname") or None,
        "os": s.get("os") or None,
        "cores": int(s["nproc"]) if s.get("nproc", "").isdigit() else facts["logical_cpus"],
        # a CPU frequency driver (cpufreq) and its governor: the governor is worth setting
        # to performance only where there is one (None: a fingerprint without the section)
        "cpufreq": {"present": True, "absent": False}.get(s.get("cpufreq", "")),
        "governor": s.get("governor") or None,
        "clocksource": s.get("clocksource") or None,
        "dmi": " ".join(s.get("dmi", "").split()) or None,
        "compiler": s.get("cc") or None,
        "python": s.get("python") or None,
    })
    platform = hypervisor.detect(s)
    facts.update(platform_facts(platform))
    # systemd-detect-virt's word where it ran, else what the other signs say
    facts["virtualization"] = (virt if virt and virt != "none" else
                               "none" if platform.name == "bare-metal" else platform.name)
    return facts


def platform_facts(platform: hypervisor.Platform) -> dict:
    """Both layers as separate facts, and in words; `platform` and `platform_evidence` as
    before (the one-word label, every sign)."""
    return {
        "platform": platform.label,
        "platform_evidence": "; ".join(platform.evidence),
        "hypervisor": platform.vm.label,
        "hypervisor_product": platform.vm.product,
        "hypervisor_evidence": "; ".join(platform.vm.evidence),
        "container": platform.container.name if platform.container else None,
        "container_evidence": "; ".join(platform.container.evidence) if platform.container
        else None,
        "platform_description": platform.describe(),
    }


def collect(env, timeout: float = 60) -> dict:
    """Run SCRIPT in `env` through its agent and parse it (empty dict if it fails)."""
    result = env.exec(["sh", "-c", SCRIPT], timeout=timeout)
    if result.exit != 0 or "==end" not in result.stdout:
        return {"fingerprint_error": (result.stderr or "no output").strip().splitlines()[-1:]}
    return parse(result.stdout)
