"""The live part of tests/unit/study/test_targets.py: its tests that need a server.

Targets the user names (~/.config/virtbench/targets.toml) for study environments virtbench
cannot start itself: strict parsing, one-line skips naming the key, and a study's Xen entry
measured through an ssh target with its published figure beside it.
"""
import json
import pytest
from virtbench.interface.cli import commands as cli
from targetkit import STUDY  # noqa: F401


def run_with_target(tmp_path, monkeypatch, capsys, spec: str) -> dict:
    """Run the study with [loop] = spec in the targets file; the JSON report."""
    cfg = tmp_path / "targets.toml"
    cfg.write_text(f'[loop]\nspec = "{spec}"\n')
    monkeypatch.setenv("VIRTBENCH_TARGETS", str(cfg))
    path = tmp_path / "s.toml"
    path.write_text(STUDY)
    code = cli.main(["run", str(path), "--quick", "--min-section", "0", "--no-progress", "--seed", "1"])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    assert cli.main(["report", "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_named_target_runs_as_the_study_environment(tmp_path, monkeypatch, capsys, store_url,
                                                      loopback_sshd):
    server, known = loopback_sshd
    data = run_with_target(tmp_path, monkeypatch, capsys,
                           f"ssh:host=127.0.0.1,port={server.port},key={server.identity},"
                           f"known_hosts={known},name=loop")
    env = {e["label"]: e for e in data["environments"]}
    assert set(env) == {"native", "loop"}
    assert env["loop"]["metadata"]["stands_for"] == "xen:vcpus=1"
    row = next(r for r in data["results"] if r["environment"] == "loop")
    assert row["published"]["ratio"] == 1.05 and row["published"]["source"] == "Table 5"
    assert data["published_only"] == []


def test_a_target_may_be_a_libvirt_domain(tmp_path, monkeypatch, capsys, store_url,
                                          loopback_sshd):
    """The study's Xen entry as a domain driven through libvirt (the test driver standing for
    xen:///system; the loopback sshd for the domain's)."""
    pytest.importorskip("libvirt")
    server, known = loopback_sshd
    node = tmp_path / "node.xml"
    node.write_text("<node><domain type='test'><name>domu</name><memory>524288</memory>"
                    "<os><type>hvm</type></os></domain></node>")
    data = run_with_target(tmp_path, monkeypatch, capsys,
                           f"libvirt:uri=test://{node},domain=domu,host=127.0.0.1,"
                           f"port={server.port},key={server.identity},known_hosts={known}")
    env = {e["label"]: e for e in data["environments"]}
    assert set(env) == {"native", "libvirt-test/domu"}
    meta = env["libvirt-test/domu"]["metadata"]
    assert meta["stands_for"] == "xen:vcpus=1" and meta["found_state"] == "running"
