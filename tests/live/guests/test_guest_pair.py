"""Two guests at once: guest-to-guest TCP across the host, and a trial in both at once."""
from virtbench.measure import environments
from virtbench.machinery.host.net import netns
from virtbench.measure.benchmarks import REGISTRY


def test_two_tcg_guests_talk_across_the_host_and_measure_together():
    group = environments.create("qemu:accel=tcg,instances=2")
    assert group.label == "qemu-tcg/virtio-blk/virtio-net/x2"
    tcp = REGISTRY["tcp-g2g"]
    cyclepi = REGISTRY["cyclepi"]
    with group:
        path = group.pair_path()
        assert (path.client_address, path.server_address) == ("10.213.0.2", "10.213.1.2")
        server = group.members[1]
        # a bystander iperf3 in the server instance: the trial must stop only its own
        bystander = server.exec(["iperf3", "-s", "-D", "-I", "/tmp/bystander.pid", "-p", "5999"],
                                timeout=30)
        assert bystander.exit == 0, bystander.stderr
        outcome = group.run_trial(tcp, tcp.params({"seconds": 1, "direction": "send"}, quick=True))
        assert outcome.ok, outcome.error
        assert outcome.values["send_mbit_s"] > 0
        alive = server.exec(["sh", "-c", 'kill -0 "$(cat /tmp/bystander.pid)"'], timeout=10)
        assert alive.exit == 0, "the trial stopped an iperf3 it did not start"
        left = server.exec(["sh", "-c", "ls -d /tmp/virtbench-iperf3.* 2>/dev/null"], timeout=10)
        assert left.stdout.strip() == ""                     # its own server is gone
        server.exec(["sh", "-c", 'kill "$(cat /tmp/bystander.pid)"'], timeout=10)
        both = group.run_trial(cyclepi, cyclepi.params({"steps": 2_000_000}))
        assert both.ok, both.error
        assert {"cycles_i0", "cycles_i1", "cycles_fairness"} <= set(both.values)
        # each guest's clock counts from its own boot: mapped onto the host's by its agent's
        # pings, to within half a round trip over virtio-serial
        clocks = both.detail["clocks"]
        assert all(c["offset_s"] < -1.0 and 0 < c["uncertainty_s"] < 0.05 for c in clocks)
        assert abs(clocks[0]["offset_s"] - clocks[1]["offset_s"]) > 0.1   # booted apart
        assert both.detail["aggregate"] == {"cycles": "slowest", "seconds": "makespan"}
        slowest = max(both.values["seconds_i0"], both.values["seconds_i1"])
        assert both.values["seconds"] >= slowest - 2 * clocks[0]["uncertainty_s"]
        # stream in both guests: the first trial measures the slots, the second runs every
        # kernel of every pass side by side and aggregates over one common interval
        stream = REGISTRY["stream"]
        params = stream.params({"elements": 200_000, "passes": 4})
        first = group.run_trial(stream, params)
        assert first.ok, first.error
        second = group.run_trial(stream, params)
        assert second.ok, second.error
        assert second.detail["slot_s"] > 0
        assert set(second.detail["aggregate"].values()) == {"common-interval"}
        for k in ("copy", "scale", "add", "triad"):
            name = f"{k}_mb_s"
            assert 0 < second.values[name] <= (second.values[f"{name}_i0"]
                                                + second.values[f"{name}_i1"]) * (1 + 1e-5)
        names = [m.ns.name for m in group.members]
    assert not set(names) & set(netns.list_namespaces())
