"""`virtbench qemu fetch` and `qemu list` for real, against FAKE suites served from a local
directory (an apt repository made here with dpkg-deb and dpkg-scanpackages, read through
file://): a fetch unpacks the packages and prints the binary's path last, records what it
fetched, a second fetch reuses (re-checking) the cache, a binary missing a shared library is
one line naming it, an unknown suite exits 2, and the system's apt is never touched."""
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in
                                 ("apt-get", "dpkg-deb", "dpkg-scanpackages", "gcc")),
    reason="needs root, apt, dpkg-dev (dpkg-scanpackages) and gcc (scripts/setup.sh --all)")

VERSION = "1:10.0.2+fake1"


def _deb(tmp: Path, out: Path, name: str, files: dict[str, tuple[bytes, int]],
         depends: str = "") -> None:
    """A binary package `name` holding `files` ({path: (content, mode)})."""
    root = tmp / f"pkg-{name}"
    (root / "DEBIAN").mkdir(parents=True)
    for rel, (content, mode) in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content)
        p.chmod(mode)
    control = (f"Package: {name}\nVersion: {VERSION}\nArchitecture: amd64\n"
               f"Maintainer: virtbench tests <t@example.org>\nDescription: fake {name}\n")
    if depends:
        control += f"Depends: {depends}\n"
    (root / "DEBIAN/control").write_text(control)
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", str(root),
                    str(out / f"{name}_{VERSION.split(':')[1]}_amd64.deb")],
                   check=True, capture_output=True)


def _suite(repo: Path, tmp: Path, suite: str, qemu_binary: bytes) -> None:
    """dists/SUITE/main/binary-amd64/Packages(.gz) and a Release, over pool/SUITE/*.deb."""
    pool = repo / "pool" / suite
    pool.mkdir(parents=True)
    depends = "libc6 (>= 2.34), qemu-system-common (= 1:10.0.2+fake1), qemu-system-data, " \
              "seabios (>> 1.16), ipxe-qemu"
    _deb(tmp / suite, pool, "qemu-system-x86",
         {"usr/bin/qemu-system-x86_64": (qemu_binary, 0o755)}, depends)
    _deb(tmp / suite, pool, "qemu-system-common",
         {"usr/lib/x86_64-linux-gnu/qemu/accel-tcg-x86_64.so": (b"\0", 0o644)})
    _deb(tmp / suite, pool, "qemu-system-data", {"usr/share/qemu/kvmvapic.bin": (b"\0", 0o644)})
    _deb(tmp / suite, pool, "seabios", {"usr/share/seabios/bios-256k.bin": (b"\0", 0o644)})
    _deb(tmp / suite, pool, "ipxe-qemu", {"usr/lib/ipxe/qemu/efi-virtio.rom": (b"\0", 0o644)})
    d = repo / "dists" / suite / "main" / "binary-amd64"
    d.mkdir(parents=True)
    packages = subprocess.run(["dpkg-scanpackages", "-m", f"pool/{suite}", "/dev/null"],
                              cwd=repo, check=True, capture_output=True).stdout
    (d / "Packages").write_bytes(packages)
    (d / "Packages.gz").write_bytes(gzip.compress(packages))
    lines = [f"Suite: {suite}", f"Codename: {suite}", "Architectures: amd64",
             "Components: main", "SHA256:"]
    for rel in ("main/binary-amd64/Packages", "main/binary-amd64/Packages.gz"):
        data = (repo / "dists" / suite / rel).read_bytes()
        lines.append(f" {hashlib.sha256(data).hexdigest()} {len(data)} {rel}")
    (repo / "dists" / suite / "Release").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    """Two fake suites: `fakeqemu` (a shell script that prints QEMU's version line) and
    `fakebroken` (a C program linked against a library that is not here)."""
    tmp = tmp_path_factory.mktemp("fakerepo")
    repo = tmp / "repo"
    script = b"#!/bin/sh\necho 'QEMU emulator version 10.0.2 (Debian 1:10.0.2+fake1)'\n" \
             b"echo 'Copyright (c) 2003-2025 Fabrice Bellard and the QEMU Project developers'\n"
    _suite(repo, tmp, "fakeqemu", script)
    build = tmp / "broken"
    build.mkdir()
    (build / "l.c").write_text("int vbfake(void){return 1;}\n")
    (build / "m.c").write_text("int vbfake(void);\nint main(void){return vbfake();}\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", "libvbfake.so.1", "l.c",
                    "-Wl,-soname,libvbfake.so.1"], cwd=build, check=True)
    subprocess.run(["gcc", "-o", "q", "m.c", "-L.", "-l:libvbfake.so.1"], cwd=build, check=True)
    _suite(repo, tmp, "fakebroken", (build / "q").read_bytes())
    return repo


@pytest.fixture
def cache(tmp_path, monkeypatch):
    c = tmp_path / "cache"
    c.mkdir(mode=0o700)
    monkeypatch.setenv("VIRTBENCH_CACHE", str(c))
    return c


def _vb(repo, *args, timeout=120):
    return subprocess.run([sys.executable, "-m", "virtbench", "qemu", *args,
                           *(("--mirror", f"file://{repo}", "--unsigned")
                             if args[0] == "fetch" else ())],
                          capture_output=True, text=True, timeout=timeout, env=os.environ)


def _apt_state():
    """What the system's apt holds (names, sizes, times) under /etc/apt and /var/lib/apt."""
    out = []
    for top in ("/etc/apt", "/var/lib/apt", "/var/cache/apt"):
        for dirpath, dirs, files in os.walk(top):
            for f in dirs + files:
                st = os.lstat(os.path.join(dirpath, f))
                out.append((dirpath, f, st.st_size, st.st_mtime_ns))
    return sorted(out)


def test_fetch_list_and_reuse(repo, cache):
    before = _apt_state()
    r = _vb(repo, "fetch", "fakeqemu")
    assert r.returncode == 0, r.stderr
    path = Path(r.stdout.strip().splitlines()[-1])
    assert path == cache / "qemu/fakeqemu/root/usr/bin/qemu-system-x86_64" and path.is_file()
    info = json.loads((cache / "qemu/fakeqemu/info.json").read_text())
    assert info["suite"] == "fakeqemu" and info["qemu_version"] == "10.0.2"
    names = sorted(p["name"] for p in info["packages"])
    assert names == ["ipxe-qemu", "qemu-system-common", "qemu-system-data", "qemu-system-x86",
                     "seabios"]
    for p in info["packages"]:
        deb = cache / "qemu/fakeqemu/debs" / p["file"]
        assert hashlib.sha256(deb.read_bytes()).hexdigest() == p["sha256"]
        assert p["version"] == VERSION
    assert not list((cache / "qemu").glob(".*partial*"))
    assert _apt_state() == before                      # the system's apt untouched

    again = _vb(repo, "fetch", "fakeqemu")
    assert again.returncode == 0 and "reusing" in again.stderr
    assert again.stdout.strip().splitlines()[-1] == str(path)

    listed = _vb(repo, "list")
    assert listed.returncode == 0 and "fakeqemu" in listed.stdout and "10.0.2" in listed.stdout

    # a cached .deb that no longer matches its checksum: fetched again, not reused
    deb = next((cache / "qemu/fakeqemu/debs").glob("seabios_*.deb"))
    deb.write_bytes(deb.read_bytes() + b"x")
    third = _vb(repo, "fetch", "fakeqemu")
    assert third.returncode == 0 and "reusing" not in third.stderr
    assert "apt-get download" in third.stderr


def test_a_binary_missing_a_library_is_one_line(repo, cache):
    r = _vb(repo, "fetch", "fakebroken")
    assert r.returncode != 0 and r.stdout == ""
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("virtbench:")]
    assert len(lines) == 1 and "libvbfake.so.1" in lines[0], r.stderr
    assert "fakebroken's qemu-system-x86_64 does not start here" in lines[0]
    assert list((cache / "qemu").iterdir()) == []      # nothing left behind


def test_a_suite_the_mirror_lacks_exits_2(repo, cache):
    r = _vb(repo, "fetch", "nosuchsuite")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.strip().splitlines()[-1] == (
        f"virtbench: qemu fetch: file://{repo} has no suite nosuchsuite; write one it has, "
        "e.g. bookworm-backports or trixie")
    assert list((cache / "qemu").iterdir()) == []
