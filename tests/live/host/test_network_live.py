"""The live part of tests/unit/benchmarks/test_network.py: its tests that need root and this host.

Network parsers on real iperf3/sockperf/ping output captured here over a veth pair,
and the network benchmarks end to end between namespaces in `native`.
"""
import subprocess
import pytest
from virtbench.measure import environments
from virtbench.machinery.host.net import netns
from virtbench.measure.benchmarks import REGISTRY
from nativekit import native_env  # noqa: F401


@pytest.mark.parametrize("name, params, headline, metrics", [
    ("tcp", {"direction": "bidir", "streams": 1, "seconds": 1}, "send_mbit_s", {"receive_mbit_s"}),
    ("tcp", {"direction": "receive", "streams": 10, "seconds": 1}, "receive_mbit_s", set()),
    ("udp", {"seconds": 1, "rate": "100M"}, "udp_mbit_s", {"loss_pct"}),
    ("rr", {"seconds": 1}, "transactions_per_s", {"rtt_p99_us"}),
    ("ping-hops", {"count": 10}, "peer_env_rtt_us", {"host_env_rtt_us", "virt_hop_share_pct"}),
])
def test_end_to_end_between_namespaces(native_env, name, params, headline, metrics):
    bench = REGISTRY[name]
    outcome = bench.run_trial(native_env, bench.params(params, quick=True))
    assert outcome.ok, outcome.error
    assert metrics <= set(outcome.values)
    assert all(outcome.values[m] >= 0 for m in metrics)        # a loss can be 0
    assert outcome.values[headline] > 0


def test_native_path_namespaces_are_removed_on_stop():
    env = environments.create("native")
    env.start()
    path = env.net_path()
    names = [p for p in netns.list_namespaces() if path.host_prefix[-1] == p
             or path.env_prefix[-1] == p or path.remote_prefix[-1] == p]
    assert len(names) == 3
    env.stop()
    assert not set(names) & set(netns.list_namespaces())
    assert not subprocess.run(["ip", "link", "show", "vbh0"], capture_output=True).returncode == 0


def test_tcp_between_two_native_instances():
    bench = REGISTRY["tcp-g2g"]
    group = environments.create("native:instances=2")
    with group:
        path = group.pair_path()
        assert (path.client_address, path.server_address) == ("10.215.0.2", "10.215.1.2")
        outcome = group.run_trial(bench, bench.params({"seconds": 1}, quick=True))
        assert outcome.ok, outcome.error
        assert outcome.values["send_mbit_s"] > 0 and outcome.values["receive_mbit_s"] > 0
        assert [m.name for m in group.metrics_for(bench)] == [m.name for m in bench.metrics]
    names = {path.client_prefix[-1], path.server_prefix[-1]}
    assert not names & set(netns.list_namespaces())
