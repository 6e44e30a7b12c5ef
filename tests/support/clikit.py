"""The CLI in one call for the tests: its exit status and what it printed; a refusal checked
as the standards say it (exit 2, one line naming the thing, nothing on stdout)."""
from __future__ import annotations

from virtbench.interface.cli import commands as cli


def run_cli(capsys, *argv):
    """(exit status, stdout, stderr) of `virtbench ARGV...`."""
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, argv, *words) -> str:
    """`virtbench ARGV...` refused: exit 2, nothing on stdout, one line holding `words`."""
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and out == "", err
    assert len(err.strip().splitlines()) == 1, err
    for w in words:
        assert w in err, err
    return err
