"""Another QEMU from a Debian suite, without touching the system: `virtbench qemu fetch SUITE`
downloads the suite's QEMU packages (qemu-system-x86, -common, -data, and the firmware
packages qemu-system-x86 depends on: seabios, ipxe-qemu) with apt pointed at a private
configuration (its own sources list, lists, status, caches: nothing under /etc/apt or
/var/lib/apt is written), unpacks them with `dpkg -x` into virtbench's cache, checks that the
binary starts (`-version`; the shared libraries it lacks named from `ldd`) and records what it
fetched (suite, package versions, sha256 of each .deb) in info.json.

    CACHE/qemu/SUITE/{info.json, debs/, root/usr/bin/qemu-system-x86_64, ...}

A fetch is built in a private directory beside it and renamed into place once it works: a
failed or interrupted fetch leaves nothing. A second fetch of the same suite re-checks the
cached one (ownership, modes, the .debs' checksums, `-version`) and reuses it. Pure parts
(suite names, sources, apt's options, Depends, ldd's output) are tested directly."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ...core.errors import VirtbenchError
from ...core.text import url_problem
from ..host import workroot
from ..kernels import build as kernels
from . import qemu_tree

MIRROR = "http://deb.debian.org/debian"
QEMU_PACKAGES = ("qemu-system-x86", "qemu-system-common", "qemu-system-data")
# what QEMU needs to boot a PC beside its data package: the BIOS and the NICs' option ROMs
FIRMWARE_PACKAGES = ("seabios", "ipxe-qemu", "ipxe-qemu-256k-compat-efi-roms")
BINARY = "usr/bin/qemu-system-x86_64"
SUITE_RE = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
APT_TIMEOUT_S = 600
Progress = Callable[[str], None] | None


class BadSuite(VirtbenchError):
    """A suite name the mirror does not have (or that is no suite name): exit 2."""


# -- pure -------------------------------------------------------------------------------------

def check_suite(suite: str) -> str:
    """`suite` if it reads as a Debian suite name (bookworm-backports, trixie), else BadSuite."""
    if not SUITE_RE.fullmatch(suite or ""):
        raise BadSuite(f"qemu fetch: {suite!r} is not a Debian suite name; write one such as "
                       "bookworm-backports or trixie")
    return suite


MIRROR_FIX = f"give one http://, https:// or file:// URL, e.g. --mirror {MIRROR}"


def mirror_problem(mirror: str) -> str | None:
    """What keeps `mirror` from being one line of the sources list's (`--mirror X` said),
    or None: it must be one URL, nothing else (a newline would add a second apt source, an
    option in brackets `[trusted=yes]`)."""
    problem = url_problem(mirror)
    return f"--mirror {mirror!r} {problem}; {MIRROR_FIX}" if problem else None


def check_mirror(mirror: str) -> str:
    """`mirror` if it is one URL, else VirtbenchError (one line, exit 2)."""
    problem = mirror_problem(mirror)
    if problem:
        raise VirtbenchError(f"qemu fetch: {problem}")
    return mirror


def sources(suite: str, mirror: str = MIRROR, trusted: bool = False) -> str:
    """The private sources list: the suite's main, and for SUITE-backports its base suite
    too (what backports' packages depend on but do not carry, e.g. ipxe-qemu). The suite
    and the mirror are checked here too: each line is one apt source, no more."""
    check_suite(suite)
    check_mirror(mirror)
    opts = "[trusted=yes] " if trusted else ""
    lines = [f"deb {opts}{mirror} {suite} main"]
    if suite.endswith("-backports"):
        lines.append(f"deb {opts}{mirror} {suite[:-len('-backports')]} main")
    return "\n".join(lines) + "\n"


def apt_options(state: Path) -> list[str]:
    """apt-get's options for a private configuration under `state`: its sources list (no
    sources.list.d), lists, an empty dpkg status (the system's installed packages do not pick
    the candidate), no preferences, its own caches, and no drop to _apt (root downloads
    into a directory only root can write)."""
    opts = {
        "Dir::Etc::sourcelist": state / "sources.list", "Dir::Etc::sourceparts": "-",
        "Dir::Etc::preferences": state / "preferences", "Dir::Etc::preferencesparts": "-",
        "Dir::State": state / "state", "Dir::State::Lists": state / "lists",
        "Dir::State::status": state / "status",
        "Dir::Cache": state / "cache", "Dir::Cache::archives": state / "archives",
        "APT::Sandbox::User": "root",
    }
    out: list[str] = []
    for key, value in opts.items():
        out += ["-o", f"{key}={value}"]
    return out


def depends_names(depends: str) -> list[str]:
    """The package names of a Depends field (the first of each alternative, no versions)."""
    names = []
    for item in depends.split(","):
        first = item.split("|")[0].strip()
        name = re.split(r"[\s(:]", first, maxsplit=1)[0]
        if name:
            names.append(name)
    return names


def wanted_packages(depends: str) -> list[str]:
    """What to download: QEMU's packages and the firmware packages qemu-system-x86 depends on."""
    return list(QEMU_PACKAGES) + [n for n in depends_names(depends) if n in FIRMWARE_PACKAGES]


def control_field(text: str, field: str) -> str:
    """One field of `apt-cache show`'s or `dpkg-deb -f`'s output (the first stanza's), or ""."""
    m = re.search(rf"^{re.escape(field)}:[ \t]*(.*(?:\n[ \t].*)*)", text, re.M)
    return " ".join(m.group(1).split()) if m else ""


def missing_libraries(ldd_output: str) -> list[str]:
    """The libraries `ldd BINARY` says are not found, and the symbol versions it lacks
    ("libc.so.6 (GLIBC_2.38)")."""
    out = re.findall(r"^\s*(\S+) => not found", ldd_output, re.M)
    out += [f"{Path(lib).name} ({ver})" for lib, ver in
            re.findall(r"(\S+): version `([^']+)' not found", ldd_output)]
    return list(dict.fromkeys(out))


def apt_failure(suite: str, mirror: str, text: str) -> VirtbenchError:
    """apt-get update's errors -> one line: a suite the mirror does not have (BadSuite, exit
    2), or what apt said."""
    # a mirror over http says so of the suite's Release; an unsigned one (trusted=yes, a local
    # directory) of its Packages, the Release being optional there
    if re.search(r"does not have a Release file|no longer has a Release file", text) or \
            re.search(rf"Failed to fetch \S*/dists/{re.escape(suite)}/\S*\s+(?:File not found|"
                      r"404\s+Not Found)", text):
        return BadSuite(f"qemu fetch: {mirror} has no suite {suite}; write one it has, e.g. "
                        "bookworm-backports or trixie")
    errs = [ln for ln in text.splitlines() if ln.startswith("E:")] or \
        text.strip().splitlines()[-1:] or ["no output"]
    return VirtbenchError(f"qemu fetch {suite}: apt-get failed: {errs[0]}")


# -- the cache --------------------------------------------------------------------------------

@dataclass
class Fetched:
    suite: str
    dir: Path
    info: dict
    reused: bool

    @property
    def binary(self) -> Path:
        return self.dir / "root" / BINARY


def qemu_cache() -> Path:
    """CACHE/qemu: made 0700 and checked like the cache itself."""
    base = kernels.cache_dir() / "qemu"
    base.mkdir(mode=0o700, exist_ok=True)
    workroot.check_dir(base, "QEMU cache directory", kernels.CACHE_ENV)
    return base


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _run(argv: list[str], what: str, cwd: Path | None = None,
         env: dict | None = None, timeout: float = APT_TIMEOUT_S) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except FileNotFoundError:
        raise VirtbenchError(f"qemu fetch: {argv[0]} not found; install apt and dpkg") from None
    except subprocess.TimeoutExpired:
        raise VirtbenchError(f"qemu fetch: {what} did not finish in {timeout:.0f} s") from None


def check_binary(binary: Path, module_dir: Path | None = None,
                 name: str = "") -> tuple[str, str]:
    """(version, first line of -version) of an unpacked QEMU; VirtbenchError (one line) when it
    does not start: the shared libraries it lacks (from ldd), or what it said."""
    env = dict(os.environ)
    if module_dir is not None:
        env[qemu_tree.MODULE_ENV] = str(module_dir)
    try:
        return qemu_tree.ask_version(str(binary), env)
    except qemu_tree.VersionFailed as exc:
        said = str(exc)
    ldd = _run(["ldd", str(binary)], "ldd", timeout=30)
    missing = missing_libraries(ldd.stdout + ldd.stderr)
    if missing:
        raise VirtbenchError(f"qemu fetch: {name or binary} does not start here: it needs shared "
                             f"libraries this host lacks: {', '.join(missing)} (a suite "
                             "built for a newer system; bookworm-backports is built for "
                             "bookworm)")
    raise VirtbenchError(f"qemu fetch: {name or binary} -version failed: {said}")


def _recheck(d: Path) -> dict | None:
    """The info of a cached fetch that still checks out (trusted dirs and binary, the
    .debs' checksums), else None."""
    info_path = d / "info.json"
    try:
        workroot.check_dir(d, "cached QEMU", kernels.CACHE_ENV)
        info = json.loads(info_path.read_text())
        qemu_tree.resolve(str(d / "root" / BINARY))
        for pkg in info["packages"]:
            if sha256(d / "debs" / pkg["file"]) != pkg["sha256"]:
                return None
    except (OSError, ValueError, KeyError, TypeError, VirtbenchError):
        return None
    return info


def cached(suite: str) -> Fetched | None:
    d = qemu_cache() / suite
    if not d.is_dir():
        return None
    info = _recheck(d)
    return Fetched(suite, d, info, True) if info is not None else None


FETCHED_PREFIX = "fetched:"


def fetched_suite(given: str) -> str | None:
    """qemu:binary=fetched:SUITE -> SUITE (checked as a suite name); None for a path (pure)."""
    if not given.startswith(FETCHED_PREFIX):
        return None
    suite = given[len(FETCHED_PREFIX):]
    if not SUITE_RE.fullmatch(suite):
        raise BadSuite(f"environment qemu: binary={given}: {suite!r} is not a Debian suite "
                       "name; write e.g. binary=fetched:bookworm-backports")
    return suite


def fetched_binary(suite: str) -> Path:
    """The binary of SUITE's QEMU in virtbench's own cache, re-checked as every cached fetch
    is (ownership and modes, the .debs' checksums): a study file names a QEMU by its suite,
    never by a path. Not fetched here (a run does not download): one line naming the fetch."""
    hit = cached(suite)
    if hit is None:
        raise VirtbenchError(f"environment qemu: binary=fetched:{suite}: virtbench's cache holds "
                             f"no QEMU of {suite} that checks out; run `virtbench qemu fetch "
                             f"{suite}` first")
    return hit.binary


def fetch(suite: str, mirror: str = MIRROR, trusted: bool = False, force: bool = False,
          progress: Progress = None) -> Fetched:
    """The suite's QEMU in the cache: reused when a fetch of it checks out, else fetched."""
    say = progress or (lambda msg: None)
    check_suite(suite)
    check_mirror(mirror)             # before the cache is made or anything is written
    base = qemu_cache()
    if not force:
        hit = cached(suite)
        if hit is not None:
            check_binary(hit.binary, _module_dir(hit.dir))
            say(f"reusing {hit.dir} (QEMU {hit.info.get('qemu_version')}, checked)")
            return hit
    work = Path(tempfile.mkdtemp(prefix=f".{suite}.partial-", dir=base))
    try:
        info = _fetch_into(work, suite, mirror, trusted, say)
        dest = base / suite
        if dest.exists():
            shutil.rmtree(dest)
        os.rename(work, dest)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return Fetched(suite, dest, info, False)


def _module_dir(d: Path) -> Path | None:
    return qemu_tree.module_dir(d / "root" / "usr", Path.is_dir)


def _fetch_into(work: Path, suite: str, mirror: str, trusted: bool, say) -> dict:
    state = work / "apt"
    for sub in ("lists/partial", "archives/partial", "cache", "state"):
        (state / sub).mkdir(parents=True)
    (state / "sources.list").write_text(sources(suite, mirror, trusted))
    (state / "status").write_text("")
    (state / "preferences").write_text("")
    opts = apt_options(state)
    say(f"apt-get update ({suite} from {mirror}, a private configuration)")
    upd = _run(["apt-get", *opts, "update"], "apt-get update")
    text = upd.stdout + upd.stderr
    if upd.returncode != 0 or re.search(r"^(E:|W: Failed to fetch)", text, re.M):
        raise apt_failure(suite, mirror, text)
    show = _run(["apt-cache", *opts, "show", f"qemu-system-x86/{suite}"], "apt-cache show")
    if show.returncode != 0 or not control_field(show.stdout, "Version"):
        raise BadSuite(f"qemu fetch: suite {suite} at {mirror} has no qemu-system-x86; "
                       "write a suite that has one, e.g. bookworm-backports or trixie")
    packages = wanted_packages(control_field(show.stdout, "Depends"))
    debs = work / "debs"
    debs.mkdir()
    say(f"apt-get download {' '.join(packages)}")
    dl = _run(["apt-get", *opts, "-t", suite, "download", *packages], "apt-get download",
              cwd=debs)
    if dl.returncode != 0:
        errs = [ln for ln in (dl.stdout + dl.stderr).splitlines() if ln.startswith("E:")]
        raise VirtbenchError(f"qemu fetch {suite}: apt-get download failed: "
                             f"{(errs or ['no message'])[0]}")
    shutil.rmtree(state)               # the lists: ~50 MB for a suite, not needed again
    root = work / "root"
    root.mkdir()
    records = []
    for deb in sorted(debs.glob("*.deb")):
        fields = _run(["dpkg-deb", "-f", str(deb), "Package", "Version"], "dpkg-deb -f")
        x = _run(["dpkg", "-x", str(deb), str(root)], "dpkg -x")
        if fields.returncode != 0 or x.returncode != 0:
            raise VirtbenchError(f"qemu fetch: {deb.name} does not unpack: "
                                 f"{(x.stderr or fields.stderr).strip()[:200]}")
        records.append({"name": control_field(fields.stdout, "Package"),
                        "version": control_field(fields.stdout, "Version"),
                        "file": deb.name, "sha256": sha256(deb), "size": deb.stat().st_size})
    if not (root / BINARY).is_file():
        raise VirtbenchError(f"qemu fetch: the packages of {suite} hold no {BINARY}")
    say(f"checking {root / BINARY} -version")
    version, line = check_binary(root / BINARY, _module_dir(work),
                                 f"{suite}'s qemu-system-x86_64")
    info = {"suite": suite, "mirror": mirror, "fetched": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "qemu_version": version, "qemu": line, "binary": f"root/{BINARY}",
            "packages": records}
    (work / "info.json").write_text(json.dumps(info, indent=1) + "\n")
    os.chmod(work, 0o700)
    return info


def listing() -> list[dict]:
    """What the cache holds: suite, QEMU version, binary, size, date (a fetch that no longer
    checks out says so)."""
    base = qemu_cache()
    rows = []
    for d in sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")):
        info = _recheck(d)
        size = sum(f.lstat().st_size for f in d.rglob("*") if f.is_file() or f.is_symlink())
        rows.append({"suite": d.name, "qemu_version": (info or {}).get("qemu_version"),
                     "path": str(d / "root" / BINARY), "size": size,
                     "fetched": (info or {}).get("fetched"), "ok": info is not None})
    return rows
