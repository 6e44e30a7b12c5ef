"""Another user plants a work root and manifests; a root run never acts on them.

End to end with the real unprivileged user `nobody` (runuser): it makes the work directory
first, in a parent that is sticky and world-writable as /var/tmp is, and plants manifests
whose every field would run its script if virtbench ran a program or touched a path a
manifest names. A root `virtbench run --env native` then refuses in one line (exit 2, nothing
written), and the script's marker file never appears. Then: a manifest of any shape is
skipped field by field, and the guardian exits cleanly on it."""
from __future__ import annotations
import os
import subprocess
import sys
import pytest
from virtbench.machinery.host import workroot
from virtbench.machinery.host import guardian

# -- a manifest of any shape -----------------------------------------------------------------
MALFORMED = [[], "text", 5, None, {"workdir": ["x"]}, {"workdir": 5},
             {"loops": 5}, {"dirs": 5}, {"dirs": [None, 5, "/"]}, {"loops": [5, None]},
             {"extra_netns": 5}, {"containers": {"a": 1}}, {"netns": ["vb-abcdef"]},
             {"created": "yesterday"}, {"created": float("nan")}, {"qemu_pid": True},
             {"qemu_pid": 2**70}, {"qemu_pid": -1}, {"pidfile": 5},
             {"libvirt_domain": "virtbench-vb-abcdef"}, {"host_taps": [["vbtabcdef"]]}]


@pytest.fixture
def tmp_root(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_TMP", str(tmp_path))
    return workroot.ensure()


@pytest.mark.parametrize("fields", MALFORMED, ids=repr)
def test_a_malformed_manifest_is_skipped_field_by_field_never_raises(tmp_root, fields):
    d = tmp_root / "vbqemu-shape"
    d.mkdir(mode=0o700)
    manifest = dict({"workdir": str(d)}, **fields) if isinstance(fields, dict) else fields
    ok, warnings = guardian.validate(manifest, str(tmp_root))
    assert set(ok) <= {"workdir", "created"} and warnings
    assert guardian.cleanup(manifest, str(tmp_root)) == []
    # the directory goes only when the manifest names it properly
    assert d.exists() == ("workdir" not in ok)


def test_a_fifo_named_as_pidfile_does_not_hang_the_guardian(tmp_root):
    d = tmp_root / "vbqemu-fifo"
    d.mkdir(mode=0o700)
    os.mkfifo(d / "qemu.pid")
    link = d / "link.pid"
    link.symlink_to("/proc/self/stat")
    code = ("import sys; from virtbench.machinery.host import guardian\n"
            f"print(guardian.validate({{'workdir': {str(d)!r}, 'pidfile': sys.argv[1]}}, "
            f"{str(tmp_root)!r})[0].get('qemu_pid'))\n")
    for pidfile in (d / "qemu.pid", link):
        out = subprocess.run([sys.executable, "-c", code, str(pidfile)], capture_output=True,
                             text=True, timeout=20)
        assert out.returncode == 0 and out.stdout.strip() == "None", out.stderr


@pytest.mark.parametrize("content", ["[1, 2]", '"text"', "{not json", '{"workdir": 5}',
                                     '{"loops": 7}'], ids=repr)
def test_the_guardian_exits_cleanly_on_any_manifest(tmp_root, content):
    """The guardian process on EOF without "done": exit 0, no traceback, whatever the file."""
    d = tmp_root / "vbctr-shape"
    d.mkdir(mode=0o700)
    (d / "manifest.json").write_text(content.replace('"loops"', f'"workdir": "{d}", "loops"'))
    # as watch.Guardian starts it; stdin at EOF at once: its owner is gone
    proc = subprocess.run([sys.executable, guardian.__file__, str(d / "manifest.json")],
                          input=b"", capture_output=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
