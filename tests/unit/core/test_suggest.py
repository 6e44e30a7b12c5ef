""""Did you mean" for near misses of names: benchmarks, kinds, options, flags and choices."""
import pytest

from virtbench.interface.cli import commands as cli
from virtbench.core.suggest import did_you_mean, nearest


def test_nearest_name():
    assert nearest("steam", ["stream", "pi", "himeno"]) == "stream"
    assert nearest("zzzz", ["stream", "pi"]) is None
    assert nearest("pi", ["pi", "stream"]) is None          # not a miss at all
    assert did_you_mean("qemmu", ["qemu", "native"]) == " (did you mean 'qemu'?)"
    assert did_you_mean("zzzz", ["qemu"]) == ""


@pytest.mark.parametrize("argv, hint", [
    (["reprot"], "(did you mean 'report'?)"),
    (["report", "--thresold", "5"], "(did you mean --threshold?)"),
    (["compare", "--alhpa=0.1"], "(did you mean --alpha?)"),
    (["report", "--format", "mardown"], "(did you mean 'markdown'?)"),
    (["fleet", "run", "--hots", "a"], "(did you mean --host?)"),
    (["run", "--bench", "steam", "--dry-run"], "unknown benchmark 'steam' (did you mean 'stream'?)"),
    (["run", "--env", "qemmu", "--bench", "pi", "--dry-run"], "(did you mean 'qemu'?)"),
    (["run", "--env", "qemu:dsk=ide", "--bench", "pi", "--dry-run"],
     "unknown option dsk (did you mean 'disk'?)"),
])
def test_near_misses_get_a_suggestion_on_one_line(capsys, store_url, argv, hint):
    assert cli.main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and hint in err and len(err.splitlines()) == 1
