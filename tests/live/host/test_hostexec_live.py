"""The live part of tests/unit/host/test_hostexec.py: its tests that need root and this host.

The host executor: its results (a time limit reached and a missing program are results),
and benchmarks' host sides driven through a fake one that answers with captured output.
"""
from __future__ import annotations
from virtbench.machinery.host.executor import HostExecutor


def test_a_missing_program_is_exit_127_naming_it():
    res = HostExecutor().run(["vb-no-such-tool"], timeout=5)
    assert res.exit == 127 and "vb-no-such-tool: not found on this host" in res.stderr
