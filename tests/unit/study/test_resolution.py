"""`resolution = R` / `--resolution R` (issue 30): a finer question of adaptive trials'
passes, asked only when given; checked in one line, said in the plan."""
from __future__ import annotations
import pytest
from virtbench.interface.cli import commands as cli


@pytest.mark.parametrize("args, message", [
    (["--resolution", "5%"], "resolution 5 % refines adaptive trials' passes; give"),
    (["--trials", "auto", "--resolution", "10"], "resolution 10 % must lie above 0 and "
                                                 "below the verdict threshold (10 %)"),
    (["--trials", "auto", "--resolution", "five"], "'five' is not a percentage"),
])
def test_a_resolution_is_checked_in_one_line(capsys, args, message):
    code = cli.main(["run", "--env", "native", "--env", "native:name=twin", "--bench", "pi",
                     "--dry-run", *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and "\n" not in err


def test_a_dry_run_says_the_resolution_asked(capsys):
    code = cli.main(["run", "--env", "native", "--env", "native:name=twin", "--bench", "pi",
                     "--dry-run", "--trials", "auto", "--resolution", "5%"])
    assert code == 0
    assert "a pass runs on until a change of 5 % is ruled out" in capsys.readouterr().out
