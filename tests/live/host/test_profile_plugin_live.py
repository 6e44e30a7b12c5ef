"""The live part of tests/unit/exits/test_profile_plugin.py: its tests that need root and this host.

The TCG plugin itself: built by virtbench (cached by source hash), checked against the
QEMU here, its port I/O decoder run on real encodings, its control socket on a real QEMU
(-M none: no guest, ~0.2 s).
"""
import subprocess
import pytest
from virtbench.core.errors import VirtbenchError
from virtbench.machinery.exits import tcg
from pluginkit import QEMU, cache, needs_gcc, needs_qemu  # noqa: F401


@needs_gcc
@needs_qemu
def test_control_socket_snapshots_on_a_real_qemu(cache, tmp_path):
    """No guest (-M none): the snapshot is empty but real, written atomically, and a bad
    destination is an error reply, not a hang."""
    so = tcg.build_plugin()
    ctl = tmp_path / "ctl.sock"
    atexit_dump = tmp_path / "atexit.dump"
    proc = subprocess.Popen([QEMU, "-M", "none", "-display", "none", "-nodefaults",
                             "-monitor", "stdio",
                             *tcg.plugin_argv(so, ctl, out=atexit_dump)],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        control = tcg.PluginControl(ctl)
        counts = control.snapshot(tmp_path / "snap", timeout=20)
        assert counts == {}
        stats = tcg.parse_stats((tmp_path / "snap").read_text())
        assert stats == {"translations": 0, "mem_callbacks": 0, "settles": 0, "learned": 0}
        with pytest.raises(VirtbenchError, match="no vCPU is running"):
            control.settle(timeout=20)     # a machine-less QEMU never retranslates
        assert (tmp_path / "snap").read_text().startswith("vbexits 1")
        assert not (tmp_path / "snap.tmp").exists()
        with pytest.raises(VirtbenchError, match="cannot write"):
            control.snapshot(tmp_path / "no" / "such" / "dir" / "snap", timeout=20)
        proc.communicate("quit\n", timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0
    assert tcg.parse(atexit_dump.read_text()) == {}       # dumped at exit
    assert not ctl.exists()                               # the socket is removed at exit
