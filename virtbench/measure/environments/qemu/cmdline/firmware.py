"""`firmware=seabios|ovmf`: the guest's firmware.

seabios  QEMU's default BIOS on pc and q35 (nothing to pass). The image's ELF kernel boots
         through PVH (an option ROM SeaBIOS runs), without decompression.
ovmf     UEFI, from Debian's `ovmf` package: the code as a read-only pflash, a copy of the
         variable store in the run's work directory as the second (written by the firmware,
         gone with the work directory). UEFI boots the kernel as Debian ships it (a bzImage
         with its EFI stub, -kernel/-initrd handed over through fw_cfg), not the PVH ELF.
         Debian's build prints nothing on the debug port 0x402: its boot has no `firmware_s`
         phase of its own, and `to_kernel_s` (VMM start to the kernel's clock zero) is where
         it shows (vmlife/phases.py).
"""
from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from .....core.errors import EnvironmentUnusable, VirtbenchError

FIRMWARES = ("seabios", "ovmf")
DEFAULT = "seabios"
OVMF_DIR = Path("/usr/share/OVMF")
OVMF_CODE = "OVMF_CODE_4M.fd"      # no Secure Boot, no SMM needed (works under TCG on pc, q35)
OVMF_VARS = "OVMF_VARS_4M.fd"
VARS_COPY = "ovmf-vars.fd"


def check_firmware(values: dict) -> None:
    """firmware=ovmf needs a machine with pflash (pc, q35): one line otherwise."""
    if values.get("firmware", DEFAULT) == "ovmf" and values.get("machine") == "microvm":
        raise VirtbenchError("environment qemu: machine=microvm has no flash for UEFI "
                             "(its firmware is qboot); drop firmware=ovmf or machine=microvm")


def _checked(path: Path) -> Path:
    """A firmware file we read as root: a regular file (no symlink) owned by root that no
    one else can write."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise EnvironmentUnusable(f"firmware=ovmf: {path} not found; install it with: "
                                  "apt-get install ovmf") from None
    if not stat.S_ISREG(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
        raise EnvironmentUnusable(f"firmware=ovmf: {path} is not a regular file owned by root "
                                  "and writable by root only; reinstall it with: "
                                  "apt-get install --reinstall ovmf")
    return path


def ovmf_files(directory: Path | None = None) -> tuple[Path, Path]:
    """(code, vars template) of Debian's OVMF (in `directory`, default OVMF_DIR), checked."""
    directory = directory or OVMF_DIR
    return _checked(directory / OVMF_CODE), _checked(directory / OVMF_VARS)


def firmware_files(firmware: str, work: Path) -> dict:
    """The cfg keys of `firmware` for build_argv: none for SeaBIOS; for OVMF its code and a
    fresh copy of its variable store in the work directory `work`."""
    if firmware != "ovmf":
        return {}
    code, template = ovmf_files()
    copy = work / VARS_COPY
    shutil.copyfile(template, copy)
    os.chmod(copy, 0o600)
    return {"firmware_code": code, "firmware_vars": copy}


def boot_kernel(image, firmware: str) -> Path:
    """The kernel file `firmware` boots from the image: the PVH ELF (or bzImage) for
    SeaBIOS, the bzImage for UEFI (OVMF cannot boot an ELF kernel)."""
    return image.bzimage if firmware == "ovmf" else image.linux


def pflash_args(cfg: dict) -> list[str]:
    """The -drive arguments of UEFI's two flash chips (pure): unit 0 the code, read-only;
    unit 1 the guest's own variable store."""
    if not cfg.get("firmware_code"):
        return []
    return ["-drive", f"if=pflash,format=raw,unit=0,readonly=on,file={cfg['firmware_code']}",
            "-drive", f"if=pflash,format=raw,unit=1,file={cfg['firmware_vars']}"]
