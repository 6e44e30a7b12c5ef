"""bench/refparse.py: the reference programs' parsers, on their real output captured here
(each fixture's header says how it was built and run)."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SPEC = importlib.util.spec_from_file_location("refparse", ROOT / "bench" / "refparse.py")
refparse = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(refparse)
FIX = ROOT / "tests" / "fixtures"


def text(*parts):
    return FIX.joinpath(*parts).read_text()


def test_stream_reference():
    rates = refparse.stream_rates(text("reference", "stream-5.10.txt"))
    assert set(rates) == {"copy", "scale", "add", "triad"} and all(v > 0 for v in rates.values())
    assert rates["copy"] == 22151.1


def test_himeno_reference():
    out = text("reference", "himenoBMTxps-M.txt")
    assert refparse.himeno_seconds_per_iteration(out) == pytest.approx(2.906882 / 92)
    assert refparse.himeno_total_iterations(out) == 3 + 92


def test_lmbench_tools():
    assert refparse.lat_syscall_ns(text("lmbench", "lat_syscall-null.txt")) == pytest.approx(199.8)
    assert refparse.lat_ctx(text("lmbench", "lat_ctx-s0-2.txt")) == pytest.approx((2280.0, 790.0))
    assert refparse.lat_pagefault_ns(text("lmbench", "lat_pagefault.txt")) == pytest.approx(332.9)
    rows = refparse.lat_mem_rd(text("lmbench", "lat_mem_rd-t-128.txt"))
    assert rows[0] == (0.00049, 1.255) and rows[-1] == (128.0, 152.568)
    assert refparse.nearest_size(rows, 16.0) == (16.0, 141.069)
    assert refparse.nearest_size(rows, 0.0156) == (0.01562, 1.288)


@pytest.mark.parametrize("parser", ["stream_rates", "himeno_seconds_per_iteration",
                                    "himeno_total_iterations", "lat_syscall_ns", "lat_ctx",
                                    "lat_pagefault_ns", "lat_mem_rd"])
def test_other_output_is_an_error(parser):
    with pytest.raises(refparse.RefError):
        getattr(refparse, parser)(text("lmbench", "lat_pagefault.txt") if parser != "lat_pagefault_ns"
                                  else text("lmbench", "lat_syscall-null.txt"))
