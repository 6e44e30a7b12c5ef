"""The image caches' shared steps (image/cache.py): a build lands in its place only whole,
replaces the one there, and leaves no temporary directory; pruning keeps what it is told to
and every build under way."""
import pytest

from virtbench.machinery.image import cache


def test_a_finished_build_replaces_the_image_there_and_leaves_nothing_beside(tmp_path):
    out = tmp_path / "abc"
    out.mkdir()
    (out / "root.raw").write_text("old")
    with cache.building(out) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith("abc.tmp-")
        (tmp / "root.raw").write_text("new")
    assert (out / "root.raw").read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["abc"]


def test_a_failed_build_leaves_the_image_there_untouched(tmp_path):
    out = tmp_path / "abc"
    out.mkdir()
    (out / "root.raw").write_text("old")
    with pytest.raises(RuntimeError):
        with cache.building(out) as tmp:
            (tmp / "root.raw").write_text("half")
            raise RuntimeError("interrupted")
    assert (out / "root.raw").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["abc"]


def test_a_first_build_needs_nothing_there(tmp_path):
    with cache.building(tmp_path / "abc") as tmp:
        (tmp / "info.json").write_text("{}")
    assert (tmp_path / "abc" / "info.json").exists()


def test_prune_keeps_the_named_and_the_builds_under_way(tmp_path):
    for name in ("keep", "old", "base-old", "new.tmp-x1"):
        (tmp_path / name).mkdir()
    (tmp_path / ".build.lock").write_text("")
    removed = cache.prune(tmp_path, {"keep"})
    assert sorted(p.name for p in removed) == ["base-old", "old"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [".build.lock", "keep", "new.tmp-x1"]
    assert cache.prune(tmp_path / "missing", set()) == []
