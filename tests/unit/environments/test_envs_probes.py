"""`virtbench envs` answers from a dated cache of the kinds' probes (in virtbench's checked
cache directory), probes again with --probe, and says on stderr what it probes."""
import json
import os

import pytest

from virtbench.measure.environments import probes
from virtbench.measure.environments.spec import Usability


class Kind:
    def __init__(self, usable, reason=""):
        self.calls, self.answer = 0, Usability(usable, reason, {"tool": "1.0"})

    def probe(self):
        self.calls += 1
        return self.answer


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("VIRTBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def kinds():
    return {"native": Kind(True), "qemu": Kind(True, "TCG only: no /dev/kvm")}


def test_probes_once_then_answers_from_the_cache_with_its_date(cache):
    k = kinds()
    lines = []
    first = probes.answers(k, progress=lines.append)
    assert not first.cached and lines == ["probing native", "probing qemu"]
    path = cache / probes.CACHE_NAME
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    again = probes.answers(k, progress=lines.append)
    assert again.cached and len(lines) == 2
    assert again.probed == first.probed
    assert again.kinds["qemu"] == Usability(True, "TCG only: no /dev/kvm", {"tool": "1.0"})
    assert [x.calls for x in k.values()] == [1, 1]


def test_a_stale_key_or_another_set_of_kinds_probes_again(cache):
    k = kinds()
    probes.answers(k)
    path = cache / probes.CACHE_NAME
    doc = json.loads(path.read_text())
    doc["key"] = doc["key"].replace("virtbench", "virtbench-old")
    path.write_text(json.dumps(doc))
    assert not probes.answers(k).cached
    assert not probes.answers({**k, "ssh": Kind(True)}).cached


@pytest.mark.parametrize("spoil", ["symlink", "writable", "garbage", "types"])
def test_a_cache_file_not_to_trust_is_probed_over(cache, tmp_path, spoil):
    k = kinds()
    probes.answers(k)
    path = cache / probes.CACHE_NAME
    if spoil == "symlink":
        target = tmp_path / "elsewhere.json"
        target.write_text(path.read_text())
        path.unlink()
        path.symlink_to(target)
    elif spoil == "writable":
        path.chmod(0o666)
    elif spoil == "garbage":
        path.write_text("{not json")
    else:
        doc = json.loads(path.read_text())
        doc["kinds"]["qemu"]["usable"] = "yes"
        path.write_text(json.dumps(doc))
    assert not probes.answers(k).cached
    assert not path.is_symlink() and oct(path.stat().st_mode & 0o777) == "0o600"
    assert probes.answers(k).cached


def test_decode_is_strict():
    key = "k"
    good = probes.encode({"native": Usability(True)}, probes.datetime.now(probes.timezone.utc),
                         key)
    assert probes.decode(good, key)[0] == {"native": Usability(True)}
    assert probes.decode(good, "other") is None
    assert probes.decode("[]", key) is None
    assert probes.decode(json.dumps({"key": key, "probed": "yesterday", "kinds": {}}), key) is None


def test_envs_from_the_cache_is_fast_and_says_when(cache, capsys):
    from virtbench.interface.cli import commands as cli
    from virtbench.measure import environments
    fake = {name: Kind(True) for name in environments.KINDS}
    path = cache / probes.CACHE_NAME
    cache.mkdir(mode=0o700)
    now = probes.datetime(2026, 11, 28, 10, 0, tzinfo=probes.timezone.utc)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, probes.encode({n: k.answer for n, k in fake.items()}, now,
                               probes.cache_key(environments.KINDS)).encode())
    os.close(fd)
    assert cli.main(["envs"]) == 0
    out, err = capsys.readouterr()
    assert "(cached; `virtbench envs --probe` probes again)" in " ".join(out.split())
    assert err == ""


def test_probe_again_redoes_the_kvm_and_gvisor_probes(cache, monkeypatch):
    from virtbench.measure.environments.gvisor import platform as gvisor_platform
    from virtbench.measure.environments.qemu.vmm import kvm_probe
    done = []
    monkeypatch.setattr(kvm_probe, "kvm_probe", lambda force=False: done.append(("kvm", force)))
    monkeypatch.setattr(gvisor_platform, "forget", lambda: done.append(("gvisor", None)))
    k = kinds()
    probes.answers(k)
    lines = []
    again = probes.answers(k, fresh=True, progress=lines.append)
    assert not again.cached and done == [("kvm", True), ("gvisor", None)]
    assert lines[0] == "probing KVM (a short guest boot)" and [x.calls for x in k.values()] == [2, 2]
