"""What an environment must release: one list, released last made first, every release run
even when one fails, a thing let go early leaving the list."""
import pytest

from virtbench.measure.environments.resources import ReleaseError, Resources


def test_released_last_made_first_once():
    done, res = [], Resources()
    for name in ("work directory", "namespace", "QEMU", "agent"):
        res.add(name, lambda name=name: done.append(name))
    assert res.names == ["work directory", "namespace", "QEMU", "agent"]
    res.close()
    assert done == ["agent", "QEMU", "namespace", "work directory"]
    assert len(res) == 0
    res.close()                                       # a second stop releases nothing twice
    assert done == ["agent", "QEMU", "namespace", "work directory"]


def test_every_release_runs_when_one_fails_and_the_first_failure_is_raised():
    done, res = [], Resources()
    res.add("work directory", lambda: done.append("work directory"))
    res.add("namespace", lambda: (_ for _ in ()).throw(OSError("ip netns: busy")))
    res.add("QEMU", lambda: (_ for _ in ()).throw(RuntimeError("kill: no such process")))
    res.add("agent", lambda: done.append("agent"))
    with pytest.raises(ReleaseError) as exc:
        res.close()
    assert done == ["agent", "work directory"]
    assert str(exc.value) == ("releasing QEMU failed: kill: no such process; "
                              "namespace too: ip netns: busy")
    assert len(res) == 0


def test_an_interrupt_during_a_release_still_releases_the_rest_then_goes_on():
    done, res = [], Resources()
    res.add("work directory", lambda: done.append("work directory"))
    res.add("QEMU", lambda: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        res.close()
    assert done == ["work directory"]


def test_a_thing_released_early_leaves_the_list():
    done, res = [], Resources()
    res.add("QEMU", lambda: done.append("QEMU"))
    twin = res.add("profiling twin", lambda: done.append("twin"))
    twin.release()
    twin.release()                                    # once only
    assert done == ["twin"] and res.names == ["QEMU"]
    res.close()
    assert done == ["twin", "QEMU"]
