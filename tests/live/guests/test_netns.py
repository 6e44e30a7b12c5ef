"""Namespaces with a tap: created, reachable only inside, always deleted; stale ones swept."""
import os
import subprocess

import pytest

from virtbench.machinery.host.net import netns

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")


def test_netns_with_tap_is_created_and_deleted():
    host_links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout
    with netns.NetNS() as ns:
        assert ns.name.startswith("vb-") and ns.exists()
        out = ns.run(["ip", "-br", "addr", "show", ns.tap], capture_output=True, text=True)
        assert ns.host_addr in out.stdout
        # nothing appeared among the host's own interfaces
        assert subprocess.run(["ip", "-br", "link"], capture_output=True,
                              text=True).stdout == host_links
    assert not ns.exists()
    assert not (netns.OWNERS / ns.name).exists()
    ns.delete()  # idempotent


def test_sweep_removes_namespaces_of_dead_owners():
    dead = netns.NetNS()
    dead.create()
    # pretend its owner was a process that no longer exists
    (netns.OWNERS / dead.name).write_text("999999999 1\n")
    alive = netns.NetNS()
    alive.create()
    try:
        removed = netns.sweep_stale()
        assert dead.name in removed and not dead.exists()
        assert alive.exists() and alive.name not in removed
    finally:
        alive.delete()
        dead.delete()


def test_owner_alive_parsing():
    me = os.getpid()
    assert netns.owner_alive(f"{me} {netns.process_start_time(me)}")
    assert not netns.owner_alive(f"{me} 1")
    assert not netns.owner_alive("")
    assert not netns.owner_alive("garbage")
