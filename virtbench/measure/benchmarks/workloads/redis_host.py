"""redis `where=host`: the server in the environment, redis-benchmark at the host side of the
environment's own network path (as `tcp` places iperf3; for native, virtbench's host-side
namespace).

The environment runs the same one-command life cycle as loopback (served.py: a fresh server,
its key space filled, always stopped), but its last step holds the server: `BLPOP HELD` until
the host side is done or the trial's timeout passes. Meanwhile, at the host side: wait until
the server says it is filled (`GET READY`), run the warm-up (discarded) and the measured
run over the path, then push to HELD so the environment's command ends and stops the server.
"""
from __future__ import annotations

import threading
import time

from ....core.errors import AgentError, VirtbenchError
from ..base import TrialOutcome, exec_error

READY, HELD = "virtbench:ready", "virtbench:held"   # filled; the host side is done
READY_S = 60.0      # for the server to start and fill, beyond the fill's own allowance
HOLD_S = 60.0       # the server held this long beyond the trial's timeout, at most


def host_trial(bench, env, params) -> TrialOutcome:
    """One where=host trial of `bench` (the redis benchmark) in `env`."""
    path = env.net_path()
    port, timeout = bench.pick_port(), bench.timeout(params)
    served = bench.served(params, env.scratch_dir(), port, path.env_address)
    box: dict = {}

    def serve() -> None:        # the environment's part: past the fill, the host side's run
        try:
            box["result"] = env.exec(path.env_prefix + served.argv(),
                                     timeout=timeout + HOLD_S + 60.0)
        except (VirtbenchError, AgentError) as exc:     # raised below, as exec() would
            box["error"] = exc

    inside = threading.Thread(target=serve, name="redis-server-in-env", daemon=True)
    inside.start()
    cli = path.host_prefix + ["redis-cli", "-h", path.env_address, "-p", str(port)]
    result, error = None, None
    try:
        wait_filled(env, cli, inside, READY_S + params["keyspace"] / 2000.0, box)
        warm = env.host.run(path.host_prefix + bench.client(
            params, port, bench.warmup_size(params), path.env_address), timeout=timeout)
        if exec_error(warm, timeout):
            raise VirtbenchError(f"the warm-up run at the host side failed: "
                                 f"{exec_error(warm, timeout)}")
        result = env.host.run(path.host_prefix + bench.client(
            params, port, params["requests"], path.env_address), timeout=timeout)
    except VirtbenchError as exc:
        error = str(exc)
    finally:
        env.host.run(cli + ["rpush", HELD, "1"], timeout=30)
        inside.join(timeout=60)
    if isinstance(box.get("error"), AgentError):      # the environment lost: the runner's
        raise box["error"]
    inner = box.get("result")
    inner_error = exec_error(inner, timeout) if inner is not None else None
    if inner_error and (result is None or result.exit != 0):
        return TrialOutcome(error=f"the server in the environment: {inner_error}",
                            stdout=inner.stdout, stderr=inner.stderr, exit=inner.exit)
    if result is None:
        return TrialOutcome(error=error)
    return bench.outcome_of(result, timeout)


def wait_filled(env, cli: list[str], inside: threading.Thread, limit: float,
                box: dict) -> None:
    """Until the server in the environment says it is filled; VirtbenchError when its command
    ended first or after `limit` seconds."""
    deadline = time.monotonic() + limit
    while True:
        out = env.host.run(cli + ["get", READY], timeout=10)
        if out.exit == 0 and out.stdout.strip() == "1":
            return
        if not inside.is_alive():
            raise VirtbenchError("the redis server in the environment ended before it was "
                                 "filled" + (f": {box['error']}" if box.get("error") else ""))
        if time.monotonic() > deadline:
            raise VirtbenchError(f"the redis server in the environment was not filled after "
                                 f"{limit:.0f} s")
        time.sleep(0.1)
