import pytest
from virtbench.measure.benchmarks import REGISTRY
from virtbench.measure.benchmarks.transfer import metric_name
from virtbench.core.errors import VirtbenchError


def test_metric_names_per_cipher():
    assert metric_name("aes128-gcm@openssh.com") == "aes128_gcm_mb_s"
    assert metric_name("chacha20-poly1305@openssh.com") == "chacha20_poly1305_mb_s"
    assert metric_name("3des-cbc") == "3des_cbc_mb_s"


def test_unknown_cipher_is_bad_input():
    with pytest.raises(VirtbenchError, match="cipher blowfish-cbc is not one of"):
        REGISTRY["scp"].params({"ciphers": "aes128-ctr,blowfish-cbc"})
