"""The TCG plugin itself: built by virtbench (cached by source hash), checked against the
QEMU here, its port I/O decoder run on real encodings, its control socket on a real QEMU
(-M none: no guest, ~0.2 s)."""
import shutil
import subprocess
from pathlib import Path
import pytest
from virtbench.machinery.host import workroot
from virtbench.core.errors import VirtbenchError
from virtbench.machinery.exits import tcg
from pluginkit import QEMU, cache, needs_gcc, needs_qemu  # noqa: F401


@needs_gcc
def test_build_is_cached_by_source_hash(cache, tmp_path):
    so = tcg.build_plugin()
    assert so.exists() and so.is_relative_to(cache / "plugins")
    mtime = so.stat().st_mtime_ns
    assert tcg.build_plugin() == so and so.stat().st_mtime_ns == mtime     # not rebuilt
    edited = tmp_path / "vbexits.c"
    edited.write_text(tcg.PLUGIN_SOURCE.read_text() + "\n/* edited */\n")
    other = tcg.build_plugin(source=edited)
    assert other != so and other.exists()
    nm = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True, text=True)
    assert "qemu_plugin_install" in nm.stdout and "qemu_plugin_version" in nm.stdout


@needs_gcc
def test_a_build_failure_is_one_line_naming_the_fix(cache, tmp_path):
    broken = tmp_path / "vbexits.c"
    broken.write_text("int qemu_plugin_version = 1;\nthis is not C;\n")
    with pytest.raises(VirtbenchError) as exc:
        tcg.build_plugin(source=broken)
    msg = str(exc.value)
    assert "\n" not in msg and "building the TCG plugin failed" in msg and "error" in msg
    assert "to see the whole error" in msg
    assert not list((cache / "plugins").rglob("*.so"))


# The decoder (static in the plugin) run through a small harness with stub API functions.
HARNESS = r"""
#include "%s"
struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t i, uint64_t v) { return 0; }
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb) {}
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *t, qemu_plugin_vcpu_udata_cb_t c, enum qemu_plugin_cb_flags f, void *u) {}
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *i, qemu_plugin_vcpu_udata_cb_t c, enum qemu_plugin_cb_flags f, void *u) {}
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *i, qemu_plugin_vcpu_mem_cb_t c, enum qemu_plugin_cb_flags f, enum qemu_plugin_mem_rw rw, void *u) {}
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *u) {}
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *t) { return 0; }
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *t) { return 0; }
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *t, size_t i) { return 0; }
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *i) { return 0; }
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *i) { return 0; }
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *i) { return 0; }
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *h) { return 0; }
const char *qemu_plugin_hwaddr_device_name(const struct qemu_plugin_hwaddr *h) { return 0; }
void qemu_plugin_outs(const char *s) {}
void qemu_plugin_reset(qemu_plugin_id_t id, qemu_plugin_simple_cb_t cb) {}
int main(int argc, char **argv) {
    for (int a = 1; a < argc; a++) {
        uint8_t b[16]; size_t n = 0;
        for (const char *p = argv[a]; p[0] != '-' && p[0] && p[1] && n < 16; p += 2) {
            unsigned v = 0; if (sscanf(p, "%%2x", &v) != 1) return 2; b[n++] = (uint8_t)v;
        }
        printf("%%d %%d\n", pio_port(b, n), never_mmio(b, n));
    }
    return 0;
}
"""

# (bytes, expected): the port for imm8 forms, 256 for DX forms, -1 for anything else
ENCODINGS = [
    ("e470", 0x70), ("e571", 0x71), ("e680", 0x80), ("e7f0", 0xf0),     # in/out imm8
    ("ec", 256), ("ed", 256), ("66ed", 256), ("ee", 256), ("66ef", 256), ("ef", 256),
    ("6c", 256), ("6d", 256), ("6e", 256), ("6f", 256),                 # ins/outs
    ("f36d", 256), ("66f36d", 256), ("f3666d", 256), ("f3486f", 256),   # rep, 66, REX
    ("40ec", 256), ("2eec", 256), ("6667e470", 0x70),
    ("e4", -1),                          # imm8 form cut short
    ("90", -1), ("0fb6c0", -1), ("48890424", -1), ("c3", -1), ("66", -1), ("", -1),
    ("0f6e", -1),                        # movd: 6E behind a 0F escape is not OUTS
]


@needs_gcc
def test_port_io_decoder_on_real_encodings(tmp_path):
    src = tmp_path / "harness.c"
    src.write_text(HARNESS % tcg.PLUGIN_SOURCE)
    exe = tmp_path / "harness"
    subprocess.run(["gcc", "-O1", "-o", str(exe), str(src), "-lpthread"], check=True)
    args = [h or "-" for h, _ in ENCODINGS]        # "-": no bytes
    out = subprocess.run([str(exe), *args], capture_output=True, text=True, check=True)
    got = [int(line.split()[0]) for line in out.stdout.splitlines()]
    assert got == [want for _, want in ENCODINGS]


# (bytes, never MMIO?): no memory callback for these
NEVER_MMIO = [
    ("55", 1), ("4154", 1), ("5d", 1), ("415f", 1), ("c3", 1), ("f3c3", 1), ("c20800", 1),
    ("c9", 1), ("e800000000", 1), ("ff1500000000", 1), ("ffd0", 1), ("ffe0", 1),
    ("ff7508", 1), ("6a00", 1), ("9c", 1), ("9d", 1), ("8f4508", 1),     # stack only
    ("65488b042500000000", 1), ("6548ff0500000000", 1),                  # %gs: per-CPU
    ("488b0424", 1), ("0fb7442408", 1), ("c7042400000000", 1),           # [rsp+...]
    ("488b0500000000", 1), ("3b0500000000", 1), ("f6050000000001", 1),   # RIP-relative
    ("89c8", 1), ("4801d8", 1),                                          # registers
    ("8b07", 0), ("668937", 0), ("488b4508", 0), ("ff4708", 0), ("ff0f", 0),
    ("498b0424", 0),                     # [r12]: REX.B makes SIB base 4 r12, not rsp
    ("0fb707", 0), ("8b0c8500000000", 0), ("f3a5", 0), ("e470", 0), ("", 0), ("0f1efa", 0),
    ("c5f96f07", 0),                     # VEX: not decoded, keeps its callback
]


@needs_gcc
def test_instructions_that_cannot_touch_mmio_get_no_memory_callback(tmp_path):
    src = tmp_path / "harness.c"
    src.write_text(HARNESS % tcg.PLUGIN_SOURCE)
    exe = tmp_path / "harness"
    subprocess.run(["gcc", "-O1", "-o", str(exe), str(src), "-lpthread"], check=True)
    out = subprocess.run([str(exe), *[h or "-" for h, _ in NEVER_MMIO]], capture_output=True,
                         text=True, check=True)
    got = [int(line.split()[1]) for line in out.stdout.splitlines()]
    assert dict(zip([h for h, _ in NEVER_MMIO], got)) == dict(NEVER_MMIO)


def test_plugin_argv():
    assert tcg.plugin_argv("/c/vbexits.so", "/run/x/ctl.sock") == \
        ["-plugin", "file=/c/vbexits.so,control=/run/x/ctl.sock"]
    assert tcg.plugin_argv(Path("/c/v.so"), out="/tmp/o", all_code=True) == \
        ["-plugin", "file=/c/v.so,out=/tmp/o,all=on"]
    assert tcg.plugin_argv("/v.so", autosettle_s=2) == ["-plugin", "file=/v.so,autosettle=2"]
    assert tcg.plugin_argv("/v.so", callers=False, mmio=False, learn=False) == \
        ["-plugin", "file=/v.so,callers=off,mmio=off,learn=off"]
    with pytest.raises(VirtbenchError, match="comma"):
        tcg.plugin_argv("/c/v.so", "/run/a,b/ctl.sock")


# QEMU 7.2's own words when a plugin asks for an API version it does not take (captured)
REFUSED = ("qemu-system-x86_64: Could not load plugin /tmp/tcgwork/bad.so: plugin requires "
           "API version 9, but this QEMU supports only up to version 1\n")


def test_a_refused_api_version_is_one_line_saying_which_versions():
    msg = tcg.explain_load_failure(REFUSED)
    assert "\n" not in msg
    assert "up to 1" in msg and "version 9" in msg, msg


def test_a_too_old_api_version_is_one_line():
    msg = tcg.explain_load_failure(
        "qemu-system-x86_64: Could not load plugin /x/vbexits.so: plugin requires API version "
        "1, but this QEMU supports only a minimum version of 2\n")
    assert "from 2 on" in msg and "version 1" in msg and "\n" not in msg


def test_other_load_failures_keep_qemus_last_line():
    msg = tcg.explain_load_failure("qemu-system-x86_64: Could not load plugin /x.so: "
                                   "/x.so: cannot open shared object file\n")
    assert msg.endswith("cannot open shared object file")


def test_no_plugin_support_names_the_fix():
    msg = tcg.explain_load_failure("qemu-system-x86_64: -plugin: invalid option\n")
    assert "--enable-plugins" in msg


@needs_gcc
@needs_qemu
def test_check_plugin_against_the_qemu_here(cache, tmp_path):
    tcg.check_plugin(tcg.build_plugin())            # ours loads
    bad_src = tmp_path / "vbexits.c"
    bad_src.write_text(tcg.PLUGIN_SOURCE.read_text().replace(
        "int qemu_plugin_version = 1;", "int qemu_plugin_version = 99;"))
    with pytest.raises(VirtbenchError) as exc:
        tcg.check_plugin(tcg.build_plugin(source=bad_src))
    assert "version 99" in str(exc.value) and "\n" not in str(exc.value)


def test_a_silent_control_socket_is_one_line(tmp_path):
    with pytest.raises(VirtbenchError, match="did not answer"):
        tcg.PluginControl(tmp_path / "none.sock").snapshot(tmp_path / "x", timeout=0.3)


class _Control:
    """A control socket answering "settle" with the given replies in turn (the plugin's own
    words; the last one repeats)."""

    def __init__(self, path, replies):
        import socket
        import threading
        self.replies, self.asked = list(replies), 0
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(8)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.recv(100)
                reply = self.replies[min(self.asked, len(self.replies) - 1)]
                self.asked += 1
                conn.sendall(reply.encode() + b"\n")


def test_a_settle_under_way_is_waited_for_then_ours_is_made(tmp_path):
    busy = "error a settle is already under way"
    ctl = _Control(tmp_path / "a.sock", [busy, busy, "ok"])
    tcg.PluginControl(tmp_path / "a.sock").settle(timeout=5)
    assert ctl.asked == 3
    _Control(tmp_path / "b.sock", [busy])
    with pytest.raises(VirtbenchError, match="could not settle: error a settle is already"):
        tcg.PluginControl(tmp_path / "b.sock").settle(timeout=0.5)
    other = _Control(tmp_path / "c.sock", ["error settle did not complete within 5 s (no vCPU "
                                           "is running)", "ok"])
    with pytest.raises(VirtbenchError, match="no vCPU is running"):
        tcg.PluginControl(tmp_path / "c.sock").settle(timeout=5)
    assert other.asked == 1                              # not retried


@needs_gcc
@needs_qemu
def test_a_session_marks_and_diffs_on_a_real_qemu(cache):
    session = tcg.TcgSession(QEMU)
    assert session.argv[0] == "-plugin" and "control=" in session.argv[1]
    assert session.dir.parent == workroot.root()      # its socket: in the work root, not /tmp
    with pytest.raises(VirtbenchError, match="mark"):
        session.since_mark()
    proc = subprocess.Popen([QEMU, "-M", "none", "-display", "none", "-nodefaults",
                             "-monitor", "stdio", *session.argv], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    try:
        session._mark = session.control.snapshot(session.dir / "m", timeout=20)   # no settle
        assert session.since_mark(timeout=20) == {}
        proc.communicate("quit\n", timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        session.close()
    assert not session.dir.exists()


def test_the_build_hash_covers_the_headers(tmp_path):
    for f in tcg.PLUGIN_SOURCE.parent.iterdir():
        shutil.copy(f, tmp_path / f.name)
    src = tmp_path / tcg.PLUGIN_SOURCE.name
    assert tcg.plugin_hash(src) == tcg.plugin_hash()
    header = tmp_path / "x86decode.h"
    header.write_text(header.read_text() + "\n/* edited */\n")
    assert tcg.plugin_hash(src) != tcg.plugin_hash()
