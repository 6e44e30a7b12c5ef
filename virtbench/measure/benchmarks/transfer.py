"""Transfer benchmarks: SCP of a large file to the environment, once per cipher (RIKEN 2012).

The copy goes from the host side of the environment's network path to its scratch disk,
so it measures what a user's scp measures: network path, cipher and disk together.
Ciphers this OpenSSH no longer offers (the study's arcfour128) are reported as
unsupported, never as zero.
"""
from __future__ import annotations

import fcntl
import os
import re
import threading
import time
from pathlib import Path

from ...machinery.kernels import build as kernels
from ...core.errors import VirtbenchError
from ...machinery.host import watch
from ...machinery.host.net.sshd import supported_ciphers
from .base import Benchmark, Metric, TrialOutcome

# RIKEN's ciphers as today's OpenSSH names them, and the one it no longer has.
CIPHERS = ("aes128-ctr", "aes128-cbc", "aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com",
           "3des-cbc", "arcfour128")


def metric_name(cipher: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", cipher.split("@")[0].lower()) + "_mb_s"


def source_file(size_mb: int, directory: Path | None = None) -> Path:
    """A file of random bytes (incompressible), made once per size in the cache directory.
    Instances (threads) and concurrent runs (processes) share it: one makes it under a lock
    while the others wait, and nobody reads a half-written file."""
    directory = directory or kernels.cache_dir() / "transfer"
    path = directory / f"random-{size_mb}MB.bin"
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / f"random-{size_mb}MB.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)       # released when the file closes
        if not path.exists() or path.stat().st_size != size_mb * 10**6:
            tmp = path.with_suffix(f".part-{os.getpid()}-{threading.get_ident()}")
            with open("/dev/urandom", "rb") as src, open(tmp, "wb") as dst:
                for _ in range(size_mb):
                    dst.write(src.read(10**6))
            tmp.rename(path)
    return path


class Scp(Benchmark):
    name = "scp"
    family = "transfer"
    description = "scp of a large file to the environment with -c CIPHER, for each cipher (MB/s)"
    metrics = tuple(Metric(metric_name(c), "MB/s", True, f"scp with -c {c}") for c in CIPHERS)
    tools = ("sshd",)
    needs = ("ssh_target", "scratch")
    defaults = {"size_mb": 1300, "ciphers": ",".join(CIPHERS)}   # RIKEN: a ~1.3 GB file
    quick = {"size_mb": 64}

    def _ciphers(self, params) -> list[str]:
        return [c.strip() for c in params["ciphers"].split(",") if c.strip()]

    def check(self, params):
        unknown = [c for c in self._ciphers(params) if c not in CIPHERS]
        if unknown:
            raise VirtbenchError(f"benchmark scp: cipher {unknown[0]} is not one of: "
                                 f"{', '.join(CIPHERS)}")
        if params["size_mb"] < 1:
            raise VirtbenchError("benchmark scp: size_mb must be at least 1")

    def timeout(self, params):
        return 120.0 + params["size_mb"] * 0.5

    def target_path(self, env) -> str:
        """Where the copy lands: the environment's (instance's) own scratch directory."""
        return f"{env.scratch_dir()}/vb-scp-target.bin"

    def run_trial(self, env, params) -> TrialOutcome:
        outcome = TrialOutcome(exit=0)
        try:
            target = env.ssh_target()
            dest = self.target_path(env)
        except VirtbenchError as exc:
            return TrialOutcome(error=str(exc))
        if not target.host_key:
            return TrialOutcome(error=f"scp: the host key of {target.address}'s sshd is not "
                                      "known, and virtbench never accepts one unseen")
        source = source_file(params["size_mb"])
        try:
            offered = set(supported_ciphers(env.host))
        except VirtbenchError as exc:
            env.exec(["rm", "-f", dest], timeout=60)
            return TrialOutcome(error=str(exc))
        with watch.temporary_dir() as tmp:
            known = Path(tmp) / "known_hosts"
            known.write_text(known_hosts_line(target))
            self._copy_each(env, params, target, source, dest, offered, known, outcome)
        env.exec(["rm", "-f", dest], timeout=60)
        if outcome.error is None and not outcome.values:
            outcome.error = "no cipher could be measured"
        return outcome

    def _copy_each(self, env, params, target, source, dest, offered, known, outcome) -> None:
        lines = []
        for cipher in self._ciphers(params):
            if cipher not in offered:
                outcome.warnings.append(("unsupported_cipher", f"{cipher}: not offered by this "
                                         "OpenSSH (ssh -Q cipher); reported as unsupported, not 0"))
                lines.append(f"{cipher}: unsupported")
                continue
            argv = target.prefix + [
                "scp", "-B", "-c", cipher, "-i", target.identity, "-P", str(target.port),
                "-o", "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={known}",
                "-o", "LogLevel=ERROR", "--", str(source),
                f"{target.user}@{target.address}:{dest}"]
            t0 = time.monotonic()
            res = env.host.run(argv, timeout=self.timeout(params))
            seconds = time.monotonic() - t0
            if res.timed_out:
                outcome.error = f"scp -c {cipher} timed out"
                break
            if res.exit != 0:
                last = (res.stderr.strip() or "(no output)").splitlines()[-1]
                if "Host key verification failed" in res.stderr:
                    last = (f"the host key of {target.address} is not the one virtbench "
                            "expects (Host key verification failed)")
                outcome.error = f"scp -c {cipher} failed: {last}"
                outcome.exit = res.exit
                break
            mb_s = params["size_mb"] / seconds
            outcome.values[metric_name(cipher)] = mb_s
            lines.append(f"{cipher}: {params['size_mb']} MB in {seconds:.3f} s = {mb_s:.1f} MB/s")
        outcome.stdout = "\n".join(lines) + "\n"


def known_hosts_line(target) -> str:
    """The known_hosts line that pins `target`'s host key (pure)."""
    host = target.address if target.port == 22 else f"[{target.address}]:{target.port}"
    return f"{host} {target.host_key}\n"
