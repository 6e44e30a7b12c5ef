"""A real guest killed mid-trial (TCG here): that trial fails, the guest is restarted (a new
boot recorded), and the later trials run in the new boot."""
import io
import os
import signal

import pytest
from rich.console import Console
from runkit import KilledUptime, one_study

from virtbench.measure.environments import qemu
from virtbench.measure.environments.base import EnvSpec
from virtbench.execution.run.runner import Prepared, Runner
from virtbench.foundations.store import Store

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or qemu.qemu_binary() is None,
    reason="guest boots need root and qemu-system-x86_64")


def test_killing_qemu_mid_trial_fails_the_trial_and_a_restart_serves_the_rest(store_url,
                                                                            guest_image):
    env = qemu.Qemu(EnvSpec.parse("qemu:accel=tcg"))
    env.resolve()
    store = Store(store_url)
    kill = KilledUptime(lambda e: os.kill(e.vmm.pid, signal.SIGKILL))
    prepared = Prepared(one_study(pin="auto", name="guest-loss"), {env.label: env},
                        {"uptime": (kill, {})}, None)
    out = Runner(store, console=Console(file=io.StringIO()), show_progress=False).start(prepared)
    trials = store.trials(out.run_id)
    assert [t["status"] for t in trials] == ["ok", "failed", "ok"]
    assert "QEMU was killed (signal 9)" in trials[1]["error"]
    assert [t["boot"] for t in trials] == [1, 1, 2]
    boots = store.boots(out.run_id)
    assert [b["boot"] for b in boots] == [1, 2]
    assert boots[0]["lost"].startswith("QEMU was killed")
    assert boots[1]["reason"].startswith("restart after: QEMU was killed")
    meta = store.environments(out.run_id)[0]["metadata"]
    assert meta["host_kernel"] == os.uname().release and meta["guest_kernel"]
    assert meta["pinning"]["mode"] == "auto" and "uptime" in meta["pinning"]["benchmarks"]
    assert env.vmm.proc is None                            # stopped at the end
