"""QMP query-stats replies, read from real ones (tests/fixtures/kvm/query_stats)."""
from __future__ import annotations

import json

import pytest

from kvmfix import fixture
from virtbench.machinery.exits.kvm_qmp import (
    EXIT_COUNTERS,
    counter_delta,
    counter_notes,
    diff_query_stats,
    parse_query_stats,
    query_stats_command,
)
from virtbench.machinery.exits.kvm_stat import KvmProfileError


def test_vcpu_reply_of_this_host_sums_over_vcpus():
    stats = parse_query_stats(fixture("query_stats/pvm_host_vcpu_after.txt"))
    assert stats.per_path == {
        "/machine/unattached/device[0]": {"halt_exits": 0, "mmio_exits": 0, "io_exits": 0, "exits": 4277},
        "/machine/unattached/device[2]": {"halt_exits": 1, "mmio_exits": 0, "io_exits": 0, "exits": 1}}
    assert stats.totals == {"exits": 4278, "io_exits": 0, "mmio_exits": 0, "halt_exits": 1}


def test_before_after_difference_over_a_trial():
    delta = diff_query_stats(fixture("query_stats/pvm_host_vcpu_before.txt"),
                             fixture("query_stats/pvm_host_vcpu_after.txt"))
    assert delta == {"exits": 4277 - 1829, "halt_exits": 0, "io_exits": 0, "mmio_exits": 0}
    assert counter_notes(delta) == [
        "KVM counters over the trial (query-stats): exits=2448, io_exits=0, mmio_exits=0, halt_exits=0"]


def test_replies_swapped_is_one_line_error():
    with pytest.raises(KvmProfileError) as err:
        diff_query_stats(fixture("query_stats/pvm_host_vcpu_after.txt"),
                         fixture("query_stats/pvm_host_vcpu_before.txt"))
    assert "exits went down (4278 -> 1830)" in str(err.value) and "\n" not in str(err.value)


def test_counter_delta_only_names_in_both():
    assert counter_delta({"exits": 1, "io_exits": 2}, {"exits": 5, "halt_exits": 9}) == {"exits": 4}


def test_booleans_are_not_counters():
    stats = parse_query_stats(fixture("query_stats/apicv_vcpu_reply.txt"))
    assert stats.totals == {"apicv_unaccelerated_inj": 2561}
    assert stats.skipped == {"apicv_active"}
    vm = parse_query_stats(json.loads(fixture("query_stats/apicv_vm_reply.txt")))
    assert vm.per_path == {"vm": {}} and vm.skipped == {"pit_reinject_mode", "synic_auto_eoi_used"}


def test_decoded_return_list_is_accepted():
    reply = json.loads(fixture("query_stats/apicv_rfc_vcpu_reply.txt"))
    assert parse_query_stats(reply["return"]).totals == {"ga_log_event": 98, "apicv_accept_irq": 166920}
    assert parse_query_stats(reply, provider="cryptodev").per_path == {}


def test_tcg_answers_empty_and_a_bad_argument_errors():
    lines = fixture("query_stats/tcg_host_transcript.txt").splitlines()
    assert parse_query_stats(lines[2]).totals == {}          # target vcpu, provider kvm, under TCG
    with pytest.raises(KvmProfileError) as err:
        parse_query_stats(lines[4])
    assert str(err.value) == ("QMP query-stats failed: Parameter 'target' does not accept value 'vcpus'; "
                              "query-stats needs QEMU 7.1 or later")


@pytest.mark.parametrize("line", [None, 1, 0])     # nothing; qmp_capabilities' {"return": {}}; the greeting
def test_not_a_reply_is_one_line(line):
    reply = "" if line is None else fixture("query_stats/tcg_host_transcript.txt").splitlines()[line]
    with pytest.raises(KvmProfileError) as err:
        parse_query_stats(reply)
    assert "\n" not in str(err.value) and str(err.value).startswith("QMP query-stats:")


def test_command_asks_kvm_for_the_exit_counters():
    cmd = query_stats_command()
    assert cmd == {"execute": "query-stats", "arguments": {"target": "vcpu", "providers": [
        {"provider": "kvm", "names": list(EXIT_COUNTERS)}]}}
    assert "names" not in query_stats_command("vm", None)["arguments"]["providers"][0]


def test_reason_rows_from_counters_of_this_host():
    from virtbench.machinery.exits.kvm_qmp import counter_reason_rows
    from virtbench.foundations.model.profile import ReasonRow
    delta = diff_query_stats(fixture("query_stats/pvm_host_vcpu_before.txt"),
                             fixture("query_stats/pvm_host_vcpu_after.txt"))
    assert counter_reason_rows(delta) == [ReasonRow(reason="other", count=2448, share_pct=100.0,
                                                    time_share_pct=None)]
    after = parse_query_stats(fixture("query_stats/pvm_host_vcpu_after.txt")).totals   # since the boot
    assert counter_reason_rows(after) == [ReasonRow(reason="other", count=4277, share_pct=99.98,
                                                    time_share_pct=None),
                                          ReasonRow(reason="halt", count=1, share_pct=0.02,
                                                    time_share_pct=None)]
    assert counter_reason_rows({"io_exits": 3}) == []      # no total: no shares
