"""`gvisor:platform=ptrace|systrap|kvm[,network=sandbox|host|none][,storage=...]`: the same
container as `container` (virtbench's tree, the agent on stdio) with runsc, Debian's gVisor,
as podman's OCI runtime (`--runtime /usr/bin/runsc --runtime-flag platform=...`).

- platform: probed with a real sandbox before the first start (platform.py); one that does
  not work here is refused with runsc's reason in one line.
- network=sandbox: gVisor's own network stack (netstack) on the veth of native's path (the
  container joins the environment's end namespace); host: the host kernel's stack in that
  namespace; none: no network (no network benchmarks).
- Disk: gVisor's sentry keeps file data in its own page cache and does not honour O_DIRECT,
  declared as capability `direct_io` so the physical-limit logic flags disk figures.
"""
from __future__ import annotations

from ....core.capabilities import Capabilities, can, cannot
from ....core.errors import EnvironmentUnusable
from ..base import Option, Usability
from ..container import podman
from ..container.environment import STORAGES, Container
from . import platform as platforms


class Gvisor(Container):
    kind = "gvisor"
    summary = "virtbench's Debian tree in a gVisor sandbox (runsc as podman's runtime)"
    options = {
        "platform": Option("ptrace", choices=platforms.PLATFORMS,
                           help="how the sentry intercepts system calls"),
        "network": Option("auto", choices=("auto", "sandbox", "host", "none"),
                          help="sandbox: gVisor's netstack; host: the host's stack (in our "
                               "namespace); none; auto: sandbox when a probe works, else host"),
        "storage": Option("overlay", choices=STORAGES, help="where the scratch directory lives"),
    }
    start_timeout = 120.0
    memory_file = "runsc-memory"     # the sentry's memfd: the sandbox's application memory

    def __init__(self, spec):
        super().__init__(spec)
        self.network: str | None = None if self.values["network"] == "auto" \
            else self.values["network"]
        self.network_reason = "" if self.network is None else f"requested (network={self.network})"

    @property
    def kind_label(self) -> str:
        """gvisor-<platform>/<network stack>, then storage when not the default."""
        parts = [f"{self.kind}-{self.values['platform']}", self.network or self.values["network"]]
        if self.values["storage"] != self.options["storage"].default:
            parts.append(f"storage={self.values['storage']}")
        return "/".join(parts)

    @classmethod
    def probe(cls) -> Usability:
        runsc = platforms.runsc_binary()
        if runsc is None:
            return Usability(False, f"runsc not found; install it with: {platforms.INSTALL}")
        base = Container.probe()
        if not base.usable:
            return base
        answers = [platforms.probe(p) for p in platforms.PLATFORMS]
        lines = "; ".join(why for _, why in answers)
        details = {"runsc_version": podman.tool_version([runsc]), "platforms": lines}
        if not any(ok for ok, _ in answers):
            return Usability(False, f"no gVisor platform works here: {lines}", details)
        return Usability(True, "", details)

    def resolve(self) -> None:
        if self.runtime is not None:
            return
        runsc = platforms.runsc_binary()
        if runsc is None:
            raise EnvironmentUnusable(f"runsc not found; install it with: {platforms.INSTALL}")
        podman.podman_binary()
        usable, why = platforms.probe(self.values["platform"])
        if not usable:
            raise EnvironmentUnusable(f"environment {self.spec}: platform="
                                      f"{self.values['platform']} is not usable here ({why})")
        self.runtime, self.runtime_reason = "runsc", why
        if self.network is None:
            ok, why = platforms.probe(self.values["platform"], network="sandbox")
            if ok:
                self.network, self.network_reason = "sandbox", "auto: a probe sandbox ran"
            else:
                self.network, self.network_reason = "host", f"auto: {why}"
                self.notes.append(f"gVisor network=host, not sandbox: {why}")
        elif self.network == "sandbox":
            ok, why = platforms.probe(self.values["platform"], network="sandbox")
            if not ok:
                raise EnvironmentUnusable(f"environment {self.spec}: {why}")

    def runtime_argv(self) -> tuple[str, list[str]]:
        return (platforms.runsc_binary() or "/usr/bin/runsc",
                [f"platform={self.values['platform']}", f"network={self.network or 'none'}"])

    def capabilities(self) -> Capabilities:
        who = f"environment {self.kind}"
        caps = super().capabilities()
        netless = cannot(f"{who}: network=none has no network; use network=sandbox or host")
        net = self.values["network"] != "none"
        stack = {"auto": "gVisor's or the host's stack", "sandbox": "gVisor's netstack",
                 "host": "the host's stack"}.get(self.values["network"])
        return caps.with_(
            net_path=can(f"veth ({stack})") if net else netless,
            remote_peer=can("a namespace one hop behind the host side") if net else netless,
            drop_caches=can("the host's page cache only: the sentry's own file cache has no "
                            "drop_caches (its disk figures are flagged through direct_io)"),
            direct_io=cannot(f"{who}: gVisor's sentry serves file I/O through its own page "
                             "cache and ignores O_DIRECT"),
            guest_root_io=cannot(f"{who}: the sentry gives no I/O ports or device registers; "
                                 "the ioport primitives run in guests only"))

    def _setup_network(self) -> str:
        if self.values["network"] == "none":
            return "none"
        return super()._setup_network()

    def _after_start(self) -> None:
        pass

    def net_path(self):
        if self.values["network"] == "none":
            raise self._cannot("net_path")
        return super().net_path()

    def pin_threads(self, bench, params: dict):
        return None     # the sentry's threads are not the container's init

    def metadata(self) -> dict:
        meta = super().metadata()
        meta.update(gvisor_platform=self.values["platform"], network=self.network,
                    network_reason=self.network_reason, platform_probe=self.runtime_reason)
        meta.pop("cpus", None)
        meta.pop("mem", None)
        return meta
