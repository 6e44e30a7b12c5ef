"""Disk parsers on real output of the tool versions guests have (bonnie++ 1.96/1.97, fio 2.2.10
and 3.1, BusyBox and BSD dd, GNU dd before 8.24); each fixture's .source says where it is from.
Expected figures are worked out by hand from the fixture's text."""
import re

import pytest

from virtbench.measure.benchmarks import get
from virtbench.measure.benchmarks.base import ParseError
from virtbench.measure.benchmarks.disk.parsers import fio_jobs, parse_bonnie, parse_dd

K = 1024 / 1e6          # K/sec (KiB/s) -> MB/s (10^6 B/s)


def one_line(exc_info):
    return "\n" not in str(exc_info.value)


# -- bonnie++ ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name, values, unmeasured", [
    # "1.97,1.97,virtbench,1,1795558404,512M,,,,220938,45,429029,61,,,+++++,+++,+++++,+++,..."
    # putc is field 7 (empty: -f), block write 9/10, rewrite 11/12, block read 15/16, seeks 17/18
    ("bonnie-1.97-s512-fD.stdout", {"block_write_mb_s": 220938 * K, "block_write_cpu_pct": 45.0,
                                    "rewrite_mb_s": 429029 * K, "rewrite_cpu_pct": 61.0},
     ["block_read", "seeks"]),
    ("bonnie-1.97-s2048-fD.stdout", {"block_write_mb_s": 166838 * K, "block_write_cpu_pct": 34.0,
                                     "rewrite_mb_s": 388664 * K, "rewrite_cpu_pct": 53.0,
                                     "seeks_per_s": 6628.0, "seeks_cpu_pct": 30.0}, ["block_read"]),
    # "1.97,...,256M,,1178,99,+++++,+++,+++++,+++,1843,99,+++++,+++,+++++,+++,..." (per-char run)
    ("bonnie-1.97-s256-per-char.stdout", {"char_write_mb_s": 1178 * K, "char_write_cpu_pct": 99.0,
                                          "char_read_mb_s": 1843 * K, "char_read_cpu_pct": 99.0},
     ["block_write", "rewrite", "block_read", "seeks"]),
    ("bonnie-1.96-s512-fD.stdout", {"block_write_mb_s": 203352 * K, "block_write_cpu_pct": 41.0,
                                    "rewrite_mb_s": 410125 * K, "rewrite_cpu_pct": 57.0},
     ["block_read", "seeks"]),
    ("bonnie-1.96-s2048-fD.stdout", {"block_write_mb_s": 192617 * K, "block_write_cpu_pct": 38.0,
                                     "rewrite_mb_s": 422998 * K, "rewrite_cpu_pct": 60.0,
                                     "seeks_per_s": 6987.0, "seeks_cpu_pct": 29.0}, ["block_read"]),
    ("bonnie-1.96-s256-per-char.stdout", {"char_write_mb_s": 1189 * K, "char_write_cpu_pct": 99.0,
                                          "char_read_mb_s": 1866 * K, "char_read_cpu_pct": 99.0},
     ["block_write", "rewrite", "block_read", "seeks"]),
])
def test_bonnie_196_197_layout(fixture_text, name, values, unmeasured):
    text = fixture_text("disk", "bonnie", name)
    result = parse_bonnie(text)
    assert result.values == pytest.approx(values) and set(result.values) == set(values)
    assert result.unmeasured == unmeasured
    assert get("bonnie").parse(text) == result.values


def test_bonnie_197_is_not_read_with_198_positions(fixture_text):
    row = fixture_text("disk", "bonnie", "bonnie-1.97-s512-fD.stdout").strip().split(",")
    assert row[11] == "429029"          # what 1.98's block-write position holds: the rewrite
    assert parse_bonnie(",".join(row)).values["block_write_mb_s"] == pytest.approx(220938 * K)


@pytest.mark.parametrize("edit, words", [
    (lambda r: ["1.93c"] + r[1:], r"bonnie\+\+ CSV format 1.93c \(bonnie\+\+ 1.97\) is not one "
                                  r"virtbench reads \(formats 1.96, 1.97, 1.98\)"),
    (lambda r: r[2:], "without a format version"),                # 1.03's CSV starts with the name
    (lambda r: ["1.98"] + r[1:], "has 48 fields, not 50"),       # a 1.97 line labelled 1.98
    (lambda r: r[:30], "has 30 fields, not 48"),                  # cut short
])
def test_bonnie_unknown_format_is_refused_in_one_line(fixture_text, edit, words):
    row = fixture_text("disk", "bonnie", "bonnie-1.97-s512-fD.stdout").strip().split(",")
    with pytest.raises(ParseError, match=words) as exc:
        get("bonnie").parse(",".join(edit(row)) + "\n")
    assert one_line(exc)


# -- dd ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, nbytes, seconds", [
    ("busybox-1.35-status-line-32m.stderr", 33554432, 0.010095),     # "..., 3.1GB/s"
    ("busybox-1.35-status-line-direct-32m.stderr", 33554432, 0.045765),
    ("gnu-pre-8.24-noah.stderr", 134217728, 0.220513),              # "(134 MB) copied"
    ("bsd-xen2006.stderr", 33554432, 17.615797),                     # "bytes transferred in"
])
def test_dd_implementations(fixture_text, name, nbytes, seconds):
    text = fixture_text("disk", "dd", name)
    assert parse_dd(text) == {"bytes": nbytes, "seconds": seconds,
                              "mb_s": pytest.approx(nbytes / seconds / 1e6)}
    assert get("dd-write").parse(text) == {"write_mb_s": pytest.approx(nbytes / seconds / 1e6)}


def test_dd_without_a_summary_is_refused_in_one_line(fixture_text):
    with pytest.raises(ParseError, match="no bytes/seconds summary .*BusyBox") as exc:
        parse_dd(fixture_text("disk", "dd", "busybox-1.35-debian-no-status-line-32m.stderr"))
    assert one_line(exc)
    with pytest.raises(ParseError, match="no dd summary line") as exc:
        parse_dd(fixture_text("disk", "dd", "busybox-1.35-debian-fdatasync.stderr"))
    assert one_line(exc)


# -- fio --------------------------------------------------------------------------------------
def fio(fixture_text, name):
    return fixture_text("disk", "fio", name)


def test_ior_rw_on_each_fio_version(fixture_text):
    # fio 2.2.10 and 3.1 have no bw_bytes: bw is KiB/s (integer) -> x 1024
    assert get("ior-rw").parse(fio(fixture_text, "fio-2.2.10-ior-64m.stdout")) == pytest.approx({
        "write_mb_s": 771011 * K, "read_mb_s": 1872457 * K})
    # 3.1: 67108864 bytes in 63 ms = 1065.22 MB/s; its bw 1040253 KiB/s x 1024 = 1065.219 MB/s
    values = get("ior-rw").parse(fio(fixture_text, "fio-3.1-ior-64m.stdout"))
    assert values == pytest.approx({"write_mb_s": 1040253 * K, "read_mb_s": 1057032 * K})
    assert values["write_mb_s"] == pytest.approx(67108864 / 0.063 / 1e6, rel=1e-3)
    assert get("ior-rw").parse(fio(fixture_text, "fio-3.33-ior-64m.stdout")) == {
        "write_mb_s": 737460043 / 1e6, "read_mb_s": 762600727 / 1e6}


@pytest.mark.parametrize("name, expected", [
    ("fio-2.2.10-cdm-quick-32m.stdout", {"seq1m_read_mb_s": 4409030 * K,
                                         "rnd4k_qd1_read_iops": 37884.12,
                                         "rnd4k_qd32_write_mb_s": 311564 * K}),
    ("fio-3.1-cdm-quick-32m.stdout", {"seq1m_read_mb_s": 970805 * K,
                                      "rnd4k_qd1_write_mb_s": 100047 * K,
                                      "rnd4k_qd32_read_iops": 107889.110889}),
    ("fio-3.33-cdm-quick-32m.stdout", {"seq1m_write_mb_s": 2785378205 / 1e6,
                                       "rnd4k_qd32_write_iops": 71180.83004}),
])
def test_cdm_on_each_fio_version(fixture_text, name, expected):
    values = get("cdm").parse(fio(fixture_text, name))
    assert len(values) == 12
    assert {k: values[k] for k in expected} == pytest.approx(expected)


@pytest.mark.parametrize("version", ["2.2.10", "3.1", "3.33"])
def test_fio_error_and_interrupted_runs_are_failed_trials(fixture_text, version):
    with pytest.raises(ParseError, match=rf"^fio-{version}: job write failed with error 28 "
                                         r"\(ENOSPC: No space left on device\)$") as exc:
        get("ior-rw").parse(fio(fixture_text, f"fio-{version}-ior-enospc.stdout"))
    assert one_line(exc)
    with pytest.raises(ParseError, match=rf"^fio-{version} was interrupted \(terminating on "
                                         r"signal 2\)") as exc:
        get("ior-rw").parse(fio(fixture_text, f"fio-{version}-ior-sigint.stdout"))
    assert one_line(exc)


@pytest.mark.parametrize("version, done, seconds", [("3.1", 956301312, 1.478),
                                                    ("3.33", 670040064, 1.652)])
def test_a_job_shorter_than_its_options_is_caught_without_the_signal_line(
        fixture_text, version, done, seconds):
    # the interrupted run, minus fio's "terminating on signal" line: the write job did
    # `done` of the 4096M asked in `seconds` of runtime=600, so it stopped short
    text = re.sub(r"(?m)^fio: terminating on signal \d+\n", "",
                  fio(fixture_text, f"fio-{version}-ior-sigint.stdout"))
    with pytest.raises(ParseError, match=rf"fio-{version}: job write stopped short: {done} of "
                                         rf"4096M bytes in {seconds} s of runtime=600"):
        fio_jobs(text)


@pytest.mark.parametrize("old, new, words", [
    ('"fio-3.33"', '"fio-4.0"', r"fio JSON from fio-4.0 is not one virtbench reads \(fio-2.2 to "
                                r"fio-3.x\)"),
    ('"fio-3.33"', '"fio-2.1.10"', "fio JSON from fio-2.1.10 is not one virtbench reads"),
    ('"fio version" : "fio-3.33"', '"version" : "3.33"', "names no version"),
    ('"bw_bytes" : 737460043', '"bw_b" : 737460043', "fio-3.33: job write has no write.bw_bytes"),
])
def test_fio_unknown_version_or_layout_is_refused_in_one_line(fixture_text, old, new, words):
    text = fio(fixture_text, "fio-3.33-ior-64m.stdout")
    assert old in text
    with pytest.raises(ParseError, match=words) as exc:
        get("ior-rw").parse(text.replace(old, new, 1))
    assert one_line(exc)
