from virtbench.machinery.machine import fingerprint


def test_parse_captured_fingerprint_of_this_host(fixture_text):
    facts = fingerprint.parse(fixture_text("fingerprint", "native-debian12.txt"))
    assert facts["cpu_model"] == "Intel(R) Xeon(R) Processor"
    assert facts["logical_cpus"] == 2 and facts["cores"] == 2
    assert facts["mem_bytes"] == 25276502016
    assert facts["kernel"] == "Linux 6.18.44-fc-v669 x86_64"
    assert facts["os"] == "Debian GNU/Linux 12 (bookworm)"
    assert facts["clocksource"] == "tsc"
    assert facts["governor"] is None            # no cpufreq in this machine
    assert facts["hypervisor_flag"] is True     # this "bare metal" is itself a guest
    assert "sse2" in facts["cpu_flags"]


def test_sections_ignore_lines_before_the_first_marker():
    s = fingerprint.split_sections("noise\n==uname\nLinux 6.1\n==nproc\n4\n")
    assert s == {"uname": "Linux 6.1", "nproc": "4"}


def test_this_host_has_no_cpufreq_and_so_no_governor(fixture_text):
    """Captured on the development machine (issue 30): the governor advice cannot apply."""
    facts = fingerprint.parse(fixture_text("fingerprint", "native-firecracker-2026-11-28.txt"))
    assert facts["cpufreq"] is False and facts["governor"] is None
    assert facts["clocksource"] == "tsc" and facts["hypervisor_flag"] is True


def test_cpufreq_present_with_its_governor_and_unknown_in_an_older_fingerprint(fixture_text):
    with_driver = fingerprint.parse("==cpufreq\npresent\n==governor\nschedutil\n==end\n")
    assert with_driver["cpufreq"] is True and with_driver["governor"] == "schedutil"
    older = fingerprint.parse(fixture_text("fingerprint", "native-debian12.txt"))
    assert older["cpufreq"] is None             # the section did not exist yet


def test_the_microcode_revision_is_a_fact_of_the_host(fixture_text):
    """Captured on the development machine: its cpuinfo's microcode line (issue 31)."""
    facts = fingerprint.parse(fixture_text("fingerprint", "native-firecracker-2026-11-28.txt"))
    assert facts["microcode"] == "0x1000065"
    assert fingerprint.parse("==cpuinfo\nmodel name : X\n==end\n")["microcode"] is None
