"""The host's programs a benchmark needs: missing ones are one line before the run, naming the
Debian package."""
import shutil

from virtbench.interface.cli import commands as cli
from virtbench.machinery.host import tools


def test_missing_names_each_absent_tool_once_in_order(monkeypatch):
    present = {"dd", "python3"}
    monkeypatch.setattr(tools, "found", lambda t: t in present)
    assert tools.missing(["fio", "dd", "blastn", "fio", "python3"]) == ["fio", "blastn"]


def test_the_hint_names_the_packages_not_the_programs():
    hint = tools.install_hint(["blastn", "makeblastdb", "ping"])
    assert hint.startswith("install with: apt-get install iputils-ping ncbi-blast+ ")


def test_a_native_benchmark_whose_program_is_missing_is_one_line_exit_2(monkeypatch, capsys,
                                                                       store_url):
    real_which = shutil.which
    monkeypatch.setattr(tools.shutil, "which", lambda t: None if t == "fio" else real_which(t))
    code = cli.main(["run", "--env", "native", "--bench", "cdm", "--trials", "1", "--quick"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "native cannot run cdm: fio not found; install with: apt-get install fio" in err
    from virtbench.foundations.store import Store
    assert Store(store_url).list_runs() == []          # nothing written
