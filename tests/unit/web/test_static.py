"""`virtbench history --format html -o DIR`: the pages written into a directory virtbench
makes; what it refuses (one line, exit 2, nothing written), and a second run replacing its
own pages whole."""
from __future__ import annotations

import os
import re

import pytest

from historykit import stepped_store
from virtbench.interface.cli import commands as cli
from virtbench.interface.web import static


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_writes_an_index_and_one_page_per_series_linked_by_file(capsys, store_url, tmp_path):
    stepped_store(store_url)
    out = tmp_path / "pages"
    code, stdout, _ = run_cli(capsys, "history", "--format", "html", "-o", str(out))
    assert code == 0 and f"wrote {out}: index.html and 3 series page(s)" in stdout
    names = sorted(os.listdir(out))
    assert names[:3] == [static.MARK, "index.html", "plotly.min.js"] and len(names) == 6
    index = (out / "index.html").read_text()
    linked = re.findall(r'href="(series-[0-9a-f]{12}\.html)"', index)
    assert sorted(linked) == names[3:]
    for name in linked:
        page = (out / name).read_text()
        assert '<script type="text/javascript" src="plotly.min.js"></script>' in page
        assert 'href="index.html"' in page and '"fig":{"data"' in page
    assert "http" not in index.split("</style>")[1].split("<body>")[0]   # nothing fetched
    assert os.stat(out).st_mode & 0o777 == 0o755


def test_a_second_run_replaces_its_own_pages(capsys, store_url, tmp_path):
    stepped_store(store_url)
    out = tmp_path / "pages"
    assert run_cli(capsys, "history", "--format", "html", "-o", str(out))[0] == 0
    (out / "series-000000000000.html").write_text("stale")
    code, _, _ = run_cli(capsys, "history", "--format", "html", "-o", str(out), "--env", "box")
    assert code == 0 and len(os.listdir(out)) == 5          # box's two series only
    assert not (out / "series-000000000000.html").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("make, words", [
    (lambda d: (d.mkdir(), (d / "notes.txt").write_text("mine")),
     "is not empty and virtbench did not make it"),
    (lambda d: (d.parent.joinpath("elsewhere").mkdir(), d.symlink_to(d.parent / "elsewhere")),
     "is a symbolic link"),
    (lambda d: d.write_text("a file"), "is not a directory"),
    (lambda d: (d.mkdir(), os.chmod(d, 0o777)), "is writable by other users"),
    (lambda d: (d.mkdir(), (d / static.MARK).symlink_to("/etc/passwd")),
     "is a symbolic link"),
])
def test_refused_targets_are_one_line_and_nothing_is_written(capsys, store_url, tmp_path,
                                                             make, words):
    stepped_store(store_url).engine.dispose()
    out = tmp_path / "pages"
    make(out)

    def files():        # the store's own WAL files come and go with its connections
        return sorted(str(p) for p in tmp_path.rglob("*") if not p.name.startswith("store.db"))
    before = files()
    code, stdout, err = run_cli(capsys, "history", "--format", "html", "-o", str(out))
    assert code == 2 and stdout == ""
    assert words in err and len(err.strip().splitlines()) == 1
    assert files() == before


def test_a_parent_others_can_write_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.raises(Exception, match="writable by other users without the sticky bit"):
        static.check_target(shared / "pages")


def test_an_empty_directory_is_used(store_url, tmp_path):
    from virtbench.results import history
    out = tmp_path / "empty"
    out.mkdir()
    where, n = static.write(history.history(stepped_store(store_url)), out)
    assert where == out and n == 4 and (out / "index.html").is_file()


def test_an_interrupted_write_leaves_nothing(monkeypatch, store_url, tmp_path):
    from virtbench.results import history
    report = history.history(stepped_store(store_url))

    def interrupted(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(static, "plotly_js", interrupted)
    with pytest.raises(KeyboardInterrupt):
        static.write(report, tmp_path / "pages")
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("store.db")] == []
