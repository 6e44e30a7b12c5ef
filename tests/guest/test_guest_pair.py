"""Two guests at once: guest-to-guest TCP across the host, and a trial in both at once."""
from virtbench import environments, netns
from virtbench.benchmarks import REGISTRY


def test_two_tcg_guests_talk_across_the_host_and_measure_together():
    group = environments.create("qemu:accel=tcg,instances=2")
    assert group.label == "qemu-tcg/virtio-blk/virtio-net/x2"
    tcp = REGISTRY["tcp-g2g"]
    cyclepi = REGISTRY["cyclepi"]
    with group:
        path = group.pair_path()
        assert (path.client_address, path.server_address) == ("10.213.0.2", "10.213.1.2")
        outcome = group.run_trial(tcp, tcp.params({"seconds": 1, "direction": "send"}, quick=True))
        assert outcome.ok, outcome.error
        assert outcome.values["send_mbit_s"] > 0
        both = group.run_trial(cyclepi, cyclepi.params({"steps": 2_000_000}))
        assert both.ok, both.error
        assert {"cycles_i0", "cycles_i1", "cycles_fairness"} <= set(both.values)
        names = [m.ns.name for m in group.members]
    assert not set(names) & set(netns.list_namespaces())
