"""Profile diff (perfdb/profile_diff.py): pure, no database."""

from __future__ import annotations

import pytest

from perfdb.kernel_functions import scheduler_functions
from perfdb.profile_diff import SCHEDULER_LINE, ProfileSide, pool, profile_diff, top_movers

# Two small listings in the shape of 002's Table 5/6: 2.4 with goodness, 2.6 without.
BASE = ProfileSide(
    "2.4.20",
    "2.4.20",
    {"schedule": 300.0, "goodness": 200.0, "default_idle": 400.0, "tcp_sendmsg": 100.0},
    work=50.0,
)
NEW = ProfileSide(
    "2.6.3",
    "2.6.3",
    {"schedule": 100.0, "default_idle": 700.0, "tcp_sendmsg": 150.0, "find_busiest_queue": 50.0},
    work=100.0,
)


def test_rows_compare_shares_and_mark_functions_that_appear_or_vanish():
    rows = {r.function: r for r in profile_diff(BASE, NEW)}
    idle = rows["default_idle"]
    assert (idle.base_share_pct, idle.new_share_pct) == (40.0, 70.0)
    assert idle.delta_share_pp == pytest.approx(30.0)
    assert rows["goodness"].status == "vanished" and rows["goodness"].new_share_pct == 0.0
    assert rows["find_busiest_queue"].status == "appeared"
    assert rows["tcp_sendmsg"].status == "both"


def test_ticks_per_unit_of_work_show_what_shares_hide():
    tcp = {r.function: r for r in profile_diff(BASE, NEW)}["tcp_sendmsg"]
    # Its share rose 10 % -> 15 %, but per message it costs less: 2.0 -> 1.5 ticks.
    assert (tcp.base_ticks_per_work, tcp.new_ticks_per_work) == (2.0, 1.5)
    no_work = profile_diff(ProfileSide("a", "2.4.20", {"f": 1.0}), ProfileSide("b", "2.4.20", {}))
    assert all(r.base_ticks_per_work is None for r in no_work)


def test_the_scheduler_set_is_one_line_on_top_using_each_kernels_era():
    rows = profile_diff(BASE, NEW)
    assert rows[0].function == SCHEDULER_LINE and rows[0].status == "set"
    assert (rows[0].base_ticks, rows[0].new_ticks) == (
        500.0,
        150.0,
    )  # schedule+goodness; schedule+fbq
    assert "goodness" in scheduler_functions("2.4.20")
    assert "pick_next_task_fair" in scheduler_functions("6.1.0")
    assert "pick_next_task_fair" not in scheduler_functions("2.5.59")


def test_movers_are_ranked_by_change_in_share_and_ties_by_name():
    movers = [r.function for r in top_movers(profile_diff(BASE, NEW), n=3)]
    assert movers == ["default_idle", "goodness", "schedule"]  # -20 pp each: by name


def test_pool_adds_trials():
    assert pool([("schedule", 10.0), ("goodness", 5.0), ("schedule", 2.5)]) == {
        "schedule": 12.5,
        "goodness": 5.0,
    }
