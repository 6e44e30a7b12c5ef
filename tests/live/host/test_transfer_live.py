"""The live part of tests/unit/benchmarks/test_transfer.py: its tests that need root and this host.


"""
import subprocess
from virtbench.measure import environments
from virtbench.measure.benchmarks import REGISTRY


def test_scp_every_cipher_or_unsupported_in_native(tmp_path):
    bench = REGISTRY["scp"]
    params = bench.params({"size_mb": 4, "ciphers": "aes128-ctr,chacha20-poly1305@openssh.com,"
                           "arcfour128"})
    env = environments.create(f"native:scratch={tmp_path}")
    with env:
        outcome = bench.run_trial(env, params)
        sshd_pid = env._sshd.server.proc.pid
    assert outcome.ok, outcome.error
    assert set(outcome.values) == {"aes128_ctr_mb_s", "chacha20_poly1305_mb_s"}
    assert all(v > 0 for v in outcome.values.values())
    assert outcome.warnings == [("unsupported_cipher", "arcfour128: not offered by this OpenSSH "
                                 "(ssh -Q cipher); reported as unsupported, not 0")]
    assert "arcfour128: unsupported" in outcome.stdout
    assert not list(tmp_path.glob("vb-scp-*"))            # the copy is removed
    assert subprocess.run(["kill", "-0", str(sshd_pid)], capture_output=True).returncode != 0


def test_scp_refuses_a_target_whose_host_key_is_not_the_one_expected(tmp_path):
    """The target's host key is pinned: another key (a machine in its place) fails the
    trial; an unknown key is never accepted."""
    from dataclasses import replace
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "k")],
                   check=True)
    other = " ".join((tmp_path / "k.pub").read_text().split()[:2])
    bench = REGISTRY["scp"]
    params = bench.params({"size_mb": 1, "ciphers": "aes128-ctr"})
    env = environments.create(f"native:scratch={tmp_path}")
    with env:
        real = env.ssh_target()
        env.ssh_target = lambda: replace(real, host_key=other)
        outcome = bench.run_trial(env, params)
        assert not outcome.ok and "Host key verification failed" in outcome.error
        env.ssh_target = lambda: replace(real, host_key="")
        outcome = bench.run_trial(env, params)
        assert not outcome.ok and "never accepts one unseen" in outcome.error
