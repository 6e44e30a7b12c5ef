"""The live part of tests/unit/environments/test_sandbox_spec.py: its tests that need a guest.

The container and gvisor kinds without starting anything: specs, labels, bad input,
capabilities, the podman command line, and the parsers on output captured on this host
(tests/fixtures/sandbox/, each file's header says where from).
"""
from pathlib import Path
from virtbench.interface.cli import commands as cli


def test_bad_option_on_the_command_line_is_exit_2_and_one_line(capsys, store_url):
    code = cli.main(["run", "--env", "container:runtime=kata", "--bench", "pi"])
    err = capsys.readouterr().err
    assert code == 2 and "runtime=kata is not valid" in err and len(err.strip().splitlines()) == 1
    assert not Path(store_url[len("sqlite:///"):]).exists()
