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
        names = [m.ns.name for m in group.members]
    assert not set(names) & set(netns.list_namespaces())
