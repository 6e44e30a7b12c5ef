"""How wide a report is laid out (report/view.py): a terminal's own width, a pipe's COLUMNS,
else 100 for the compact report and 200 for --wide."""
import pytest

from virtbench.results.report.view import View, width_for


def test_a_terminal_lets_rich_ask_it():
    assert width_for(True, False, {"COLUMNS": "80"}) is None


@pytest.mark.parametrize("wide,want", [(False, 100), (True, 200)])
def test_a_pipe_without_columns_gets_the_report_s_own_width(wide, want):
    assert width_for(False, wide, {}) == want


@pytest.mark.parametrize("columns,want", [("120", 120), ("0", 100), ("wide", 100), ("", 100)])
def test_a_pipe_honours_the_columns_it_is_given_when_they_are_a_width(columns, want):
    assert width_for(False, False, {"COLUMNS": columns}) == want


def test_a_view_lays_out_in_its_width_or_its_form_s_default():
    assert (View().columns, View(wide=True).columns, View(width=90).columns) == (100, 200, 90)
