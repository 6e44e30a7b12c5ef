"""dd-write: dd sequential write (RIKEN 2012's conv=fdatasync, or Xen 2006's sync mount)."""
from __future__ import annotations

from ....core.errors import VirtbenchError
from ..base import Metric
from .base import DiskBenchmark, TrialFailed, last_line
from .parsers import parse_dd


class DdWrite(DiskBenchmark):
    name = "dd-write"
    description = ("dd sequential write, bs=1M: conv=fdatasync (RIKEN 2012, 1 GB), or the "
                   "Xen 2006 form: bs=1M count=32 on a file system mounted -o sync")
    metrics = (Metric("write_mb_s", "MB/s", True,
                      "bytes written / dd's elapsed seconds (10^6 B/s); form=sync-mount: on a "
                      "file system mounted -o sync (a loop-mounted ext4 image on native; "
                      "oflag=sync instead, with a warning, where it cannot mount)"),)
    tools = ("dd",)
    output = "stderr"
    # size_mb=0: the form's own size (fdatasync: 1024 as RIKEN 2012; sync-mount: 32 as Xen 2006)
    # direct: oflag=direct with cache=out; RIKEN's dd had none (direct=false: buffered writes,
    # conv=fdatasync flushes them before dd stops its clock)
    defaults = {"size_mb": 0, "form": "fdatasync", "cache": "out", "direct": True}
    quick = {"size_mb": 32}
    FORMS = ("fdatasync", "sync-mount")

    def check(self, params):
        super().check(params)
        if params["form"] not in self.FORMS:
            raise VirtbenchError(f"benchmark dd-write: form={params['form']} is not valid; "
                                 f"use one of: {', '.join(self.FORMS)}")
        if params["size_mb"] < 0:
            raise VirtbenchError("benchmark dd-write: size_mb must be >= 0 (0: the form's size)")

    def size(self, params) -> int:
        if params["size_mb"]:
            return params["size_mb"]
        return 1024 if params["form"] == "fdatasync" else 32

    def timeout(self, params):
        return 300.0 + self.size(params) * 2.0   # 0.5 MB/s is still a result

    def command(self, params, trial):
        argv = ["dd", "if=/dev/zero", f"of={trial.target}/dd.dat", "bs=1M",
                f"count={self.size(params)}"]
        if params["form"] == "fdatasync":
            argv.append("conv=notrunc,fdatasync" if params["cache"] == "in" else "conv=fdatasync")
            if params["cache"] == "out" and params["direct"]:
                argv.append("oflag=direct")
        else:
            if params["cache"] == "in":
                argv.append("conv=notrunc")
        return argv + trial.extra

    def prepare(self, env, params, trial):
        if params["form"] != "sync-mount":
            return
        # A guest's scratch file system is ours (its scratch is a disk virtbench made): remount
        # it -o sync for the trial and back. The host's file systems are not ours (a scratch
        # directory): loop-mount an ext4 image inside scratch_dir.
        if env.capabilities().scratch.how == "disk":
            out = self._step(env, ["findmnt", "-n", "-o", "TARGET", "-T", trial.workdir],
                             "finding the scratch mount")
            mountpoint = out.strip().splitlines()[0] if out.strip() else "/"
            if mountpoint != "/":
                self._step(env, ["mount", "-o", "remount,sync", mountpoint], "remount -o sync")
                trial.cleanup.append(["mount", "-o", "remount,async", mountpoint])
                opts = self._step(env, ["findmnt", "-n", "-o", "OPTIONS", mountpoint],
                                  "checking the mount options")
                if "sync" not in opts.strip().split(","):
                    raise TrialFailed(f"{mountpoint} is not mounted sync after remount: {opts.strip()}")
                return
        image, mnt = f"{trial.workdir}/sync.img", f"{trial.workdir}/mnt"
        script = ('set -e; truncate -s "$3"M "$1"; mkfs.ext4 -q -F "$1"; mkdir -p "$2"; '
                  'mount -o loop,sync "$1" "$2"')
        res = self._exec(env, ["sh", "-c", script, "sh", image, mnt,
                               str(self.size(params) + 96)], 120)
        if res.exit == 0:
            trial.target = mnt
            trial.cleanup.append(["umount", mnt])
            return
        trial.warnings.append((
            "method", "dd-write form=sync-mount: could not loop-mount an ext4 image -o sync "
            f"({last_line(res.stderr)}); measured with oflag=sync on the scratch file system "
            "instead (synchronous data writes, but not the study's sync mount)"))
        trial.extra = ["oflag=sync"]

    def parse(self, stdout):
        """dd's stderr (its summary line) -> write_mb_s."""
        return {"write_mb_s": parse_dd(stdout)["mb_s"]}
