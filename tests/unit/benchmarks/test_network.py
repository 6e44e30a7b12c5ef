"""Network parsers on real iperf3/sockperf/ping output captured here over a veth pair,
and the network benchmarks end to end between namespaces in `native`."""
import pytest
from virtbench.measure.benchmarks import REGISTRY, ParseError
from virtbench.measure.benchmarks import network as net
from nativekit import native_env  # noqa: F401


def test_iperf3_send_one_stream(fixture_text):
    v = net.parse_iperf3_tcp(fixture_text("network", "iperf3-send-1.json"))
    assert v == {"send_mbit_s": pytest.approx(8635.6335), "retransmits": 225.0}


def test_iperf3_reverse_is_the_receive_direction(fixture_text):
    v = net.parse_iperf3_tcp(fixture_text("network", "iperf3-receive-10.json"))
    assert v == {"receive_mbit_s": pytest.approx(11966.2217), "retransmits": 46.0}


def test_iperf3_bidir_gives_both_directions_and_sums_retransmits(fixture_text):
    v = net.parse_iperf3_tcp(fixture_text("network", "iperf3-bidir-1.json"))
    assert v["send_mbit_s"] == pytest.approx(5435.3537)
    assert v["receive_mbit_s"] == pytest.approx(5741.2168)
    assert v["retransmits"] == 315 + 170


def test_iperf3_udp(fixture_text):
    v = net.parse_iperf3_udp(fixture_text("network", "iperf3-udp-500m.json"))
    assert v["udp_mbit_s"] == pytest.approx(499.6074)
    assert v["loss_pct"] == pytest.approx(0.0382396)


def test_sockperf_full_rtt(fixture_text):
    v = net.parse_sockperf_pingpong(fixture_text("network", "sockperf-pingpong-tcp.stdout"))
    assert v["transactions_per_s"] == pytest.approx(274417 / 2.550)
    assert (v["rtt_avg_us"], v["rtt_p50_us"], v["rtt_p99_us"]) == (9.257, 6.459, 11.864)


def test_ping_summary(fixture_text):
    v = net.parse_ping_rtt(fixture_text("network", "ping-veth.stdout"))
    assert v == {"min_us": 6.0, "avg_us": 29.0, "max_us": 363.0, "loss_pct": 0.0}


def test_hop_share():
    assert net.hop_shares(100.0, 300.0, 400.0)["virt_hop_share_pct"] == 75.0


@pytest.mark.parametrize("parser, text, words", [
    (net.parse_iperf3_tcp, "", "no iperf3 JSON"),
    (net.parse_iperf3_tcp, '{"error": "unable to connect to server: Connection refused"}',
     "unable to connect"),
    (net.parse_iperf3_tcp, '{"start": {}, "end": {', "malformed"),
    (net.parse_sockperf_pingpong, "sockperf: avg-latency=6.591\n", "full-rtt"),
    (net.parse_ping_rtt, "3 packets transmitted, 0 received, 100% packet loss\n", "no ping rtt"),
])
def test_garbage_is_a_parse_error(parser, text, words):
    with pytest.raises(ParseError, match=words):
        parser(text)


def test_bad_parameters():
    from virtbench.core.errors import VirtbenchError
    with pytest.raises(VirtbenchError, match="use one of: send, receive, bidir"):
        REGISTRY["tcp"].params({"direction": "both"})


def test_guest_to_guest_needs_two_instances(native_env):
    bench = REGISTRY["tcp-g2g"]
    outcome = native_env.run_trial(bench, bench.params(quick=True))
    assert not outcome.ok and "instances=2" in outcome.error


def test_join_hosts_refuses_one_subnet_on_both_sides():
    from virtbench.machinery.host.net.netpath import join_hosts
    with pytest.raises(ValueError, match="nothing to route"):
        join_hosts("vb-a-h", "10.215.0.2", "vb-b-h", "10.215.0.2")


def test_ping_per_packet_median(fixture_text):
    v = net.parse_ping_rtt(fixture_text("network", "ping-veth-per-packet.stdout"))
    assert v["avg_us"] == 40.0 and v["max_us"] == 233.0
    assert v["median_us"] == 30.0     # the 233 µs first packet does not move it
    assert "median_us" not in net.parse_ping_rtt(fixture_text("network", "ping-veth.stdout"))
