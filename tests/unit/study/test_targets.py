"""Targets the user names (~/.config/virtbench/targets.toml) for study environments virtbench
cannot start itself: strict parsing, one-line skips naming the key, and a study's Xen entry
measured through an ssh target with its published figure beside it."""
import pytest
from virtbench.study import design as study, targets
from virtbench.core.errors import VirtbenchError
from targetkit import STUDY  # noqa: F401


@pytest.mark.parametrize("text, words", [
    ('[x]\nspec = "ssh:host=h"\nhots = 1\n', "[x]: unknown key 'hots'"),
    ('[x]\nspec = "qemu:accel=tcg"\n', "spec kind 'qemu' is not a machine you name"),
    ('[x]\nnote = "no spec"\n', "[x]: spec must be a non-empty string"),
    ('x = "ssh:host=h"\n', "x must be a table"),
])
def test_targets_file_is_strict(text, words):
    with pytest.raises(VirtbenchError, match=words.replace("[", r"\[").replace("]", r"\]")):
        targets.parse_targets(text, "t.toml")


def test_an_unnamed_target_is_skipped_with_the_key_to_set(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(STUDY)
    s = study.load(str(path))
    [(spec, why)] = study.skipped_environments(s, {}, "/cfg/targets.toml")
    assert spec == "xen:vcpus=1"
    assert "add [loop] with spec = \"ssh:host=ADDRESS,name=loop\"" in why
    assert "/cfg/targets.toml" in why and "XenServer in the paper" in why
    assert study.skipped_environments(s, {"loop": "ssh:host=h"}, "t") == []
