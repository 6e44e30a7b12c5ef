"""Network benchmarks: both ends driven by virtbench over the environment's network path.

The client runs in the environment (through its agent); the server runs at the host side of
the environment's NIC, in a namespace virtbench created (see netpath_types.NetPath).
Every test is bounded in time; every server is started for one trial and stopped after it.
"""
from __future__ import annotations

import json
import re
import time
from typing import Any

from ...core.errors import VirtbenchError
from ...machinery.host.net.netpath import HostServer
from .base import Benchmark, Metric, ParseError, TrialOutcome
from .iperf3 import parse_iperf3_tcp, parse_iperf3_udp, udp_warnings  # noqa: F401 (re-exported)

DIRECTIONS = ("send", "receive", "bidir")
RR_SIZE_RANGE = (14, 65000)     # sockperf ping-pong -m: "minimum default 14"


# -- pure parsers ------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def parse_sockperf_pingpong(stdout: str) -> dict[str, float]:
    """sockperf ping-pong --full-rtt: transactions/s over the valid duration, RTT avg/p50/p99."""
    text = _ANSI.sub("", stdout)
    valid = re.search(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=(\d+); "
                      r"ReceivedMessages=(\d+)", text)
    avg = re.search(r"avg-rtt=([\d.]+)", text)
    p50 = re.search(r"percentile 50\.000 =\s*([\d.]+)", text)
    p99 = re.search(r"percentile 99\.000 =\s*([\d.]+)", text)
    if not (valid and avg and p50 and p99):
        raise ParseError("sockperf output lacks the valid-duration line, avg-rtt or percentiles "
                         "(was it run with --full-rtt?)")
    seconds, received = float(valid.group(1)), int(valid.group(3))
    if seconds <= 0:
        raise ParseError("sockperf valid duration is zero")
    return {"transactions_per_s": received / seconds, "rtt_avg_us": float(avg.group(1)),
            "rtt_p50_us": float(p50.group(1)), "rtt_p99_us": float(p99.group(1))}


def parse_ping_rtt(stdout: str) -> dict[str, float]:
    """iputils ping: the summary's min/avg/max in ms -> µs and the loss; with per-packet lines
    (no -q), also their median, which one slow packet cannot move."""
    m = re.search(r"rtt min/avg/max/mdev = ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms", stdout)
    loss = re.search(r"([\d.]+)% packet loss", stdout)
    if not m or not loss:
        raise ParseError("no ping rtt summary (did every packet get lost?)")
    out = {"min_us": float(m.group(1)) * 1000, "avg_us": float(m.group(2)) * 1000,
           "max_us": float(m.group(3)) * 1000, "loss_pct": float(loss.group(1))}
    times = sorted(float(t) * 1000 for t in re.findall(r" time=([\d.]+) ms", stdout))
    if times:
        mid = len(times) // 2
        out["median_us"] = times[mid] if len(times) % 2 else (times[mid - 1] + times[mid]) / 2
    return out


def hop_shares(peer_host_us: float, host_env_us: float, peer_env_us: float) -> dict[str, float]:
    """The Zhang decomposition: the share of the end-to-end RTT the virtualization hop adds."""
    if peer_env_us <= 0:
        raise ParseError("end-to-end RTT is zero")
    return {"peer_host_rtt_us": peer_host_us, "host_env_rtt_us": host_env_us,
            "peer_env_rtt_us": peer_env_us,
            "virt_hop_share_pct": 100.0 * host_env_us / peer_env_us}


class NetworkBenchmark(Benchmark):
    """Client in the environment, server at the host side; subclasses give argv and parse."""

    family = "network"
    port = 5201
    needs = ("net_path",)

    def server_argv(self, params: dict[str, Any], address: str) -> list[str]:
        """iperf3's one-shot server by default (tcp, udp); sockperf overrides it."""
        return ["iperf3", "-s", "-1", "-B", address, "-p", str(self.port)]

    def client_argv(self, params: dict[str, Any], server: str) -> list[str]:
        raise NotImplementedError

    def timeout(self, params):
        return float(params.get("seconds", 10)) + 60.0

    def run_trial(self, env, params) -> TrialOutcome:
        try:
            path = env.net_path()
            with HostServer(self.server_argv(params, path.host_address), self.port,
                            path.host_prefix, host=env.host):
                result = env.exec(path.env_prefix + self.client_argv(params, path.host_address),
                                  timeout=self.timeout(params))
        except VirtbenchError as exc:
            return TrialOutcome(error=str(exc))
        return self.outcome_of(result, self.timeout(params))


class Tcp(NetworkBenchmark):
    name = "tcp"
    description = ("iperf3 TCP throughput: streams 1 or 10 (RIKEN nettcp), send / receive / bidir; "
                   "window for the CNAF -w256k -P5 form")
    metrics = (Metric("send_mbit_s", "Mbit/s", True, "environment -> host side"),
               Metric("receive_mbit_s", "Mbit/s", True, "host side -> environment"),
               Metric("retransmits", "segments", False, "TCP retransmits of the senders"))
    tools = ("iperf3",)
    defaults = {"streams": 1, "direction": "bidir", "window": "", "seconds": 10}
    quick = {"seconds": 3}

    def check(self, params):
        if params["direction"] not in DIRECTIONS:
            raise VirtbenchError(f"benchmark tcp: direction={params['direction']} is not valid; "
                                 f"use one of: {', '.join(DIRECTIONS)}")
        if not 1 <= params["streams"] <= 128 or not 1 <= params["seconds"] <= 3600:
            raise VirtbenchError("benchmark tcp: streams 1..128 and seconds 1..3600")

    def client_argv(self, params, server):
        argv = ["iperf3", "-c", server, "-p", str(self.port), "-J", "-t", str(params["seconds"]),
                "-P", str(params["streams"])]
        if params["direction"] == "receive":
            argv.append("-R")
        elif params["direction"] == "bidir":
            argv.append("--bidir")
        if params["window"]:
            argv += ["-w", params["window"]]
        return argv

    def parse(self, stdout):
        return parse_iperf3_tcp(stdout)


class Udp(NetworkBenchmark):
    name = "udp"
    description = "iperf3 UDP at a target rate from the environment: throughput, loss, jitter"
    metrics = (Metric("udp_mbit_s", "Mbit/s", True,
                      "received at the host side, as the receiver counted it (iperf3 >= 3.11; "
                      "before, its datagrams: packets - lost, x block size, over the time)"),
               Metric("loss_pct", "%", False, "datagrams lost, as the receiver counted them"),
               Metric("jitter_ms", "ms", False, "iperf3's jitter at the receiver"))
    tools = ("iperf3",)
    defaults = {"rate": "1G", "seconds": 10, "length": 1448}
    quick = {"seconds": 3, "rate": "500M"}

    def client_argv(self, params, server):
        return ["iperf3", "-c", server, "-p", str(self.port), "-J", "-u", "-b", params["rate"],
                "-l", str(params["length"]), "-t", str(params["seconds"])]

    def parse(self, stdout):
        return parse_iperf3_udp(stdout)

    def extra_warnings(self, text):
        return udp_warnings(text)


class RequestResponse(NetworkBenchmark):
    name = "rr"
    description = "request/response latency: sockperf ping-pong (netperf TCP_RR/UDP_RR's role)"
    metrics = (Metric("transactions_per_s", "1/s", True, "round trips per second"),
               Metric("rtt_avg_us", "µs", False, "mean round-trip time"),
               Metric("rtt_p50_us", "µs", False, "median round-trip time"),
               Metric("rtt_p99_us", "µs", False, "99th percentile round-trip time"))
    tools = ("sockperf",)
    defaults = {"protocol": "tcp", "seconds": 10, "size": 64}
    quick = {"seconds": 3}
    port = 11111

    def check(self, params):
        if params["protocol"] not in ("tcp", "udp"):
            raise VirtbenchError(f"benchmark rr: protocol={params['protocol']} is not valid; "
                                 "use one of: tcp, udp")
        low, high = RR_SIZE_RANGE
        if not low <= params["size"] <= high:
            raise VirtbenchError(f"benchmark rr: size={params['size']} is out of range; use "
                                 f"{low} to {high} bytes (sockperf's smallest message is {low})")
        if not 1 <= params["seconds"] <= 3600:
            raise VirtbenchError("benchmark rr: seconds 1..3600")

    def _proto(self, params):
        return ["--tcp"] if params["protocol"] == "tcp" else []

    def server_argv(self, params, address):
        return ["sockperf", "server", "-i", address, "-p", str(self.port), *self._proto(params)]

    def client_argv(self, params, server):
        return ["sockperf", "ping-pong", "-i", server, "-p", str(self.port), *self._proto(params),
                "-t", str(params["seconds"]), "-m", str(params["size"]), "--full-rtt"]

    def parse(self, stdout):
        return parse_sockperf_pingpong(stdout)


class PingHops(Benchmark):
    """Zhang et al.: RTT remote->host, host->environment, remote->environment."""

    name = "ping-hops"
    family = "network"
    description = ("ping RTT split into hops: remote->host side, host side->environment (the "
                   "virtualization hop), remote->environment; and that hop's share")
    metrics = (Metric("peer_host_rtt_us", "µs", False, "median RTT remote namespace -> host side"),
               Metric("host_env_rtt_us", "µs", False, "median RTT host side -> environment"),
               Metric("peer_env_rtt_us", "µs", False, "median RTT remote -> environment"),
               Metric("virt_hop_share_pct", "%", False, "host->environment RTT / end-to-end RTT"))
    tools = ("ping",)
    needs = ("remote_peer", "net_path")   # without a remote peer, a peer= does not help
    # warmup: pings sent and discarded before each hop is measured, so an idle guest's wake-up
    # (and ARP) lands on no hop; it mattered: without it a TCG guest's first hop came out
    # slower than the end-to-end path through it.
    defaults = {"count": 100, "interval": 0.01, "warmup": 10}
    quick = {"count": 30}

    def timeout(self, params):
        return (params["count"] + params["warmup"]) * max(params["interval"], 0.01) * 3 + 30

    def _ping(self, host, prefix, target, params) -> dict[str, float]:
        """One hop, pinged from the host side through `host` (the environment's executor)."""
        base = prefix + ["ping", "-i", str(params["interval"]), "-W", "2"]
        if params["warmup"]:
            host.run(base + ["-c", str(params["warmup"]), target], timeout=self.timeout(params))
        res = host.run(base + ["-c", str(params["count"]), target], timeout=self.timeout(params))
        if res.timed_out:
            raise ParseError(f"ping {target} timed out after {self.timeout(params):.0f} s")
        if res.exit == 127:
            raise ParseError(res.stderr.strip())
        return parse_ping_rtt(res.stdout)

    def run_trial(self, env, params) -> TrialOutcome:
        try:
            path = env.net_path()
            if path.remote_prefix is None:
                return TrialOutcome(error=f"{env.label} has no remote namespace for ping-hops")
            hops = (self._ping(env.host, path.remote_prefix, path.host_address, params),
                    self._ping(env.host, path.host_prefix, path.env_address, params),
                    self._ping(env.host, path.remote_prefix, path.env_address, params))
        except (ParseError, VirtbenchError) as exc:
            return TrialOutcome(error=str(exc))
        text = "\n".join(f"{name}: {json.dumps(h)}" for name, h in
                         zip(("remote->host", "host->env", "remote->env"), hops))
        # medians: under TCG the guest hop's jitter is as large as the veth hop itself
        return TrialOutcome(values=hop_shares(*(h["median_us"] for h in hops)), stdout=text, exit=0)


def daemon_argv(address: str, port: int, pidfile: str) -> list[str]:
    """iperf3's one-shot server, daemonised, writing its PID to `pidfile`."""
    return ["iperf3", "-s", "-1", "-D", "-I", pidfile, "-B", address, "-p", str(port)]


# A private directory for the server's pidfile: made by mktemp (0700, ours) where the server
# runs, so no other user can put a pidfile of theirs in its place once iperf3 removes its own.
PIDDIR_ARGV = ["mktemp", "-d", "-t", "virtbench-iperf3.XXXXXXXX"]


def stop_pidfile_argv(pidfile: str) -> list[str]:
    """Stop the process whose PID `pidfile` holds, only if it still runs and is the server
    started with this pidfile (its command line names it), then remove the pidfile's
    private directory."""
    return ["sh", "-c",
            'p=$(cat "$1" 2>/dev/null); case "$p" in ""|*[!0-9]*) ;; *) '
            'tr "\\0" "\\n" < "/proc/$p/cmdline" 2>/dev/null | grep -qxF -- "$1" '
            '&& kill "$p" 2>/dev/null;; esac; rm -rf -- "${1%/*}"; exit 0', "sh", pidfile]


class GuestToGuestTcp(Tcp):
    """iperf3 between two instances of one environment (`instances=2`): guest to guest
    across the host's virtual network, the server in instance 1, the client in instance 0."""

    name = "tcp-g2g"
    description = ("iperf3 TCP between two instances of an environment (instances=2): guest to "
                   "guest through the host's virtual network")
    pairwise = True
    needs = ("pairing",)

    def run_trial(self, env, params) -> TrialOutcome:
        return TrialOutcome(error=f"tcp-g2g needs two instances of an environment; "
                                  f"use --env '{env.spec},instances=2'")

    def run_pair(self, client, server, path, params) -> TrialOutcome:
        """`path` is the pair's route: (client address, server address) and each end's prefix."""
        made = server.exec(PIDDIR_ARGV, timeout=30)
        piddir = made.stdout.strip()
        if made.exit != 0 or not piddir.startswith("/"):
            return TrialOutcome(error=f"cannot make a private directory in the second instance "
                                      f"(mktemp -d: exit {made.exit})")
        pidfile = f"{piddir}/iperf3.pid"
        start = server.exec(path.server_prefix + daemon_argv(path.server_address, self.port,
                                                             pidfile), timeout=30)
        if start.exit != 0:
            server.exec(stop_pidfile_argv(pidfile), timeout=10)
            return TrialOutcome(error=f"iperf3 server in the second instance: exit {start.exit}: "
                                      f"{(start.stderr.strip() or 'no output').splitlines()[-1]}")
        try:
            deadline = time.monotonic() + 10
            while not server.exec(path.server_prefix + ["ss", "-H", "-ltn", f"sport = :{self.port}"],
                                  timeout=10).stdout.strip():
                if time.monotonic() > deadline:
                    return TrialOutcome(error="iperf3 server in the second instance not listening")
                time.sleep(0.1)
            result = client.exec(path.client_prefix + self.client_argv(params, path.server_address),
                                 timeout=self.timeout(params))
        finally:   # ours only, by its PID: never every iperf3 on the machine
            server.exec(path.server_prefix + stop_pidfile_argv(pidfile), timeout=10)
        return self.outcome_of(result, self.timeout(params))
