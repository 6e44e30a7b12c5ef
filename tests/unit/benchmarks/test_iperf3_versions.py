"""iperf3's client JSON from 3.1.3 to 3.21, captured here (each fixture's .source says how):
every figure is the receiver's, computed by hand from the fixture's bytes and seconds."""
import json

import pytest

from virtbench.measure.benchmarks import REGISTRY, ParseError
from virtbench.measure.benchmarks import iperf3
from virtbench.measure.benchmarks import network as net


def fixture(fixture_text, name):
    return fixture_text("network", "iperf3", name)


def mbit(nbytes, seconds):
    return pytest.approx(nbytes * 8 / seconds / 1e6, rel=1e-6)


# (fixture, {metric: (receiver's bytes, receiver's seconds)}, retransmits of every sender sum)
TCP = [
    # 3.1.3 / 3.5: no "sender" flag; -R (test_start.reverse) makes the sums the receive direction
    ("iperf3-3.1.3-tcp-send-1.json", {"send_mbit_s": (7861826560, 2.000034)}, 1),
    ("iperf3-3.1.3-tcp-send-4.json", {"send_mbit_s": (7157738551, 2.000681)}, 16),
    ("iperf3-3.1.3-tcp-receive-2.json", {"receive_mbit_s": (7543455638, 2.001139)}, 5),
    ("iperf3-3.5-tcp-send-1.json", {"send_mbit_s": (5493620736, 2.007109)}, 13),
    ("iperf3-3.5-tcp-receive-2.json", {"receive_mbit_s": (5310382080, 2.0000479221343994)}, 5),
    # 3.7-3.10 --bidir: sum_sent/sum_received twice in end; the first pair (sender true) is
    # env -> host, the second (sender false) host -> env; retransmits of both senders add up
    ("iperf3-3.7-tcp-send-4.json", {"send_mbit_s": (5789450240, 2.001904)}, 9),
    ("iperf3-3.7-tcp-receive-2.json", {"receive_mbit_s": (5766250496, 2.000748)}, 4),
    ("iperf3-3.7-tcp-bidir-1.json", {"send_mbit_s": (3389521920, 2.002675),
                                     "receive_mbit_s": (2743468032, 2.002675)}, 6 + 3),
    ("iperf3-3.7-tcp-bidir-2.json", {"send_mbit_s": (2399797248, 2.010109),
                                     "receive_mbit_s": (1969487872, 2.010109)}, 9 + 20),
    ("iperf3-3.9-tcp-send-1.json", {"send_mbit_s": (3277848576, 2.002839)}, 16),
    ("iperf3-3.9-tcp-bidir-2.json", {"send_mbit_s": (2271209472, 2.001803),
                                     "receive_mbit_s": (3418619798, 2.001803)}, 8 + 1),
    ("iperf3-3.10.1-tcp-send-1.json", {"send_mbit_s": (4757782528, 2.002858)}, 9),
    ("iperf3-3.10.1-tcp-receive-2.json", {"receive_mbit_s": (4417388544, 2.000021)}, 3),
    ("iperf3-3.10.1-tcp-bidir-1.json", {"send_mbit_s": (3139174400, 2.004433),
                                        "receive_mbit_s": (2238971904, 2.004433)}, 4 + 12),
    # 3.11+: the reverse pair is named sum_*_bidir_reverse
    ("iperf3-3.11-tcp-bidir-1.json", {"send_mbit_s": (3373006848, 2.002018),
                                      "receive_mbit_s": (4299948032, 2.002018)}, 6 + 4),
    ("iperf3-3.11-tcp-send-4.json", {"send_mbit_s": (3295019008, 2.007434)}, 21),
    ("iperf3-3.16-tcp-send-4.json", {"send_mbit_s": (6594601368, 2.003407)}, 48),
    ("iperf3-3.16-tcp-receive-2.json", {"receive_mbit_s": (7084179456, 2.001222)}, 5),
    ("iperf3-3.16-tcp-bidir-2.json", {"send_mbit_s": (2494562304, 2.002176),
                                      "receive_mbit_s": (5302124544, 2.002176)}, 0 + 12),
    ("iperf3-3.18-tcp-bidir-1.json", {"send_mbit_s": (3439787979, 2.002097),
                                      "receive_mbit_s": (4937744384, 2.002097)}, 9 + 19),
    ("iperf3-3.21-tcp-send-1.json", {"send_mbit_s": (7474249728, 2.001895)}, 5),
    ("iperf3-3.21-tcp-bidir-2.json", {"send_mbit_s": (1174069730, 2.000533),
                                      "receive_mbit_s": (6313869312, 2.000533)}, 2 + 29),
]


@pytest.mark.parametrize("name, received, retransmits", TCP, ids=[t[0] for t in TCP])
def test_tcp_is_what_the_receiver_counted(fixture_text, name, received, retransmits):
    values = net.parse_iperf3_tcp(fixture(fixture_text, name))
    assert values == {**{m: mbit(b, s) for m, (b, s) in received.items()},
                      "retransmits": float(retransmits)}


def test_old_bidir_is_not_collapsed_to_its_last_pair(fixture_text):
    text = fixture(fixture_text, "iperf3-3.7-tcp-bidir-1.json")
    plain = json.loads(text)["end"]           # what a plain JSON reader keeps: the last pair
    assert plain["sum_received"]["bytes"] == 2743468032 and plain["sum_received"]["sender"] is False
    values = net.parse_iperf3_tcp(text)
    assert values["send_mbit_s"] == mbit(3389521920, 2.002675)      # the first pair's receiver
    assert values["receive_mbit_s"] == mbit(2743468032, 2.002675)


# (fixture, received (bytes, seconds) from sum_received (3.11+) or None, lost packets, packets
# the loss % is over, jitter)
UDP = [
    ("iperf3-3.1.3-udp-500m.json", None, 42235, 83769, 0.212708),
    ("iperf3-3.5-udp-500m.json", None, 21158, 86277, 0.27121610413259317),
    ("iperf3-3.7-udp-500m.json", None, 8568, 86308, 0.0011262114996061934),
    ("iperf3-3.9-udp-500m.json", None, 9504, 86298, 0.0031576713762028617),
    ("iperf3-3.9-deb11-udp-500m.json", None, 9588, 85871, 0.004907044471160618),
    ("iperf3-3.10.1-udp-500m.json", None, 12920, 86209, 0.24116514934461142),
    ("iperf3-3.11-udp-500m.json", (110572176, 2.002826), 9863, 86272, 0.169942457848669),
    ("iperf3-3.12-deb12-udp-500m.json", (119558464, 2.007785), 3688, 86301, 0.000995686705411992),
    ("iperf3-3.16-udp-500m.json", (113919952, 2.003541), 0, 86300, 0.0050675261834454925),
    ("iperf3-3.18-udp-500m.json", (120517040, 2.000444), 0, 86328, 0.00838508610074132),
    ("iperf3-3.21-udp-500m.json", (124794432, 2.002005), 0, 86367, 0.009308920596477553),
]


def datagrams(packets, lost, seconds, blksize=1448):
    """The received rate before 3.11, by hand: the datagrams that arrived, over the time."""
    return mbit((packets - lost) * blksize, seconds)


# before 3.11: end.sum's seconds, and 1448 bytes a datagram (-l 1448, start.test_start.blksize)
SECONDS = {"iperf3-3.1.3-udp-500m.json": 2.000124, "iperf3-3.5-udp-500m.json": 2.007126,
           "iperf3-3.7-udp-500m.json": 2.000142, "iperf3-3.9-udp-500m.json": 2.00013,
           "iperf3-3.9-deb11-udp-500m.json": 2.052055, "iperf3-3.10.1-udp-500m.json": 2.004383}


@pytest.mark.parametrize("name, received, lost, packets, jitter", UDP, ids=[u[0] for u in UDP])
def test_udp_is_what_the_receiver_counted(fixture_text, name, received, lost, packets, jitter):
    text = fixture(fixture_text, name)
    values = net.parse_iperf3_udp(text)
    expected = {"loss_pct": pytest.approx(100 * lost / packets, rel=1e-7),  # 3.1.3 prints %f
                "jitter_ms": jitter,
                "udp_mbit_s": mbit(*received) if received
                else datagrams(packets, lost, SECONDS[name])}
    assert values == expected
    warnings = REGISTRY["udp"].extra_warnings(text)
    assert bool(warnings) == (received is None)
    if warnings:
        (kind, message), = warnings
        assert kind == "method" and message.startswith("udp_mbit_s computed: iperf3 ")
        assert "(end.sum.packets - end.sum.lost_packets) x start.test_start.blksize" in message


def test_udp_before_3_11_never_reports_the_senders_rate(fixture_text):
    # Debian 11's 3.9 (both sides) sent 497.2 Mbit/s, but 11 % of the datagrams were lost:
    # that sender's figure is in end.sum and must not come out as received throughput
    text = fixture(fixture_text, "iperf3-3.9-deb11-udp-500m.json")
    assert json.loads(text)["end"]["sum"]["bits_per_second"] > 490e6
    assert "sum_received" not in json.loads(text)["end"]
    rate = REGISTRY["udp"].parse(text)["udp_mbit_s"]
    assert rate == datagrams(85871, 9588, 2.052055)
    assert 425 < rate < 435


@pytest.mark.parametrize("name", ["iperf3-3.11-udp-500m.json", "iperf3-3.12-deb12-udp-500m.json"])
def test_the_computed_rate_agrees_with_the_receivers_own_count(fixture_text, name):
    # 3.11 and 3.12 write both: what the datagrams give and what the receiver counted. They
    # differ by the datagrams in flight at the end (45 of 86301 in Debian 12's 3.12 run)
    data = json.loads(fixture(fixture_text, name))
    computed = iperf3.udp_received_rate(data)
    assert computed == pytest.approx(data["end"]["sum_received"]["bits_per_second"], rel=1e-3)
    assert computed > data["end"]["sum_received"]["bits_per_second"]   # in flight: an overcount


@pytest.mark.parametrize("key, where", [("packets", "sum"), ("lost_packets", "sum"),
                                        ("seconds", "sum"), ("blksize", "test_start")])
def test_without_a_field_to_compute_from_the_rate_is_left_out(fixture_text, key, where):
    data = json.loads(fixture(fixture_text, "iperf3-3.9-deb11-udp-500m.json"))
    del (data["end"]["sum"] if where == "sum" else data["start"]["test_start"])[key]
    text = json.dumps(data)
    values = net.parse_iperf3_udp(text)
    assert "udp_mbit_s" not in values and values["loss_pct"] == pytest.approx(11.165585587683852)
    (kind, message), = REGISTRY["udp"].extra_warnings(text)
    assert kind == "unmeasured" and "udp_mbit_s left out" in message


@pytest.mark.parametrize("old, new, words", [
    ('"iperf 3.7"', '"iperf 3.22"', "iperf3 3.22 is not one virtbench reads (3.1 to 3.21)"),
    ('"iperf 3.7"', '"iperf 3.0.11"', "iperf3 3.0.11 is not one virtbench reads (3.1 to 3.21)"),
    ('"version":\t"iperf 3.7",', "", "names no version"),
])
def test_an_unknown_version_is_refused_in_one_line(fixture_text, old, new, words):
    text = fixture(fixture_text, "iperf3-3.7-tcp-bidir-1.json")
    assert old in text
    for parser in (net.parse_iperf3_tcp, net.parse_iperf3_udp):
        with pytest.raises(ParseError, match=words.replace("(", r"\(").replace(")", r"\)")) as exc:
            parser(text.replace(old, new, 1))
        assert "\n" not in str(exc.value)


def test_a_sum_without_its_receiver_is_a_parse_error(fixture_text):
    text = fixture(fixture_text, "iperf3-3.11-tcp-bidir-1.json")
    cut = text.replace('"sum_received_bidir_reverse"', '"not_a_sum"', 1)
    with pytest.raises(ParseError, match="lacks a sum_sent/sum_received pair"):
        net.parse_iperf3_tcp(cut)
