"""Profile diff (perfdb/features/profile_diff.py): pure, no database."""

from __future__ import annotations

import pytest

from perfdb.features.profile_diff import (
    IDLE_LINE,
    SCHEDULER_LINE,
    ProfileSide,
    idle_rows,
    pool,
    profile_diff,
    top_movers,
)
from perfdb.kernels.functions import scheduler_functions

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

# 002 (Anand 2003) Tables 5 and 6, Trade 2.7 on 002-A (demo/002-anand-2003-trade27/readprofile/):
# the readprofile listings as printed; 2.4-distro's total 23969, 2.5.59's 60332.
TABLE_5 = ProfileSide(
    "2.4-distro",
    "2.4-distro",
    {
        "default_idle": 7071.0,
        "schedule": 2388.0,
        "csum_partial_copy...": 822.0,
        "send_sig_info": 799.0,
        "save_i387": 744.0,
        "tcp_v4_rcv": 511.0,
    },
)
TABLE_6 = ProfileSide(
    "2.5.59",
    "2.5.59",
    {
        "default_idle": 54048.0,
        "schedule": 397.0,
        "csum_partial_copy...": 365.0,
        "tcp_sendmsg": 191.0,
        "__kfree_skb": 181.0,
        "load_balance": 177.0,
    },
)


def test_rows_compare_shares_and_mark_functions_that_appear_or_vanish():
    rows = {r.function: r for r in profile_diff(BASE, NEW)}
    idle = rows["default_idle"]
    assert idle.idle and (idle.base_share_pct, idle.new_share_pct) == (40.0, 70.0)  # of all
    assert idle.delta_share_pp == pytest.approx(30.0)
    assert rows["goodness"].status == "vanished" and rows["goodness"].new_share_pct == 0.0
    assert rows["find_busiest_queue"].status == "appeared"
    assert rows["tcp_sendmsg"].status == "both" and not rows["tcp_sendmsg"].idle


def test_ticks_per_unit_of_work_show_what_shares_hide():
    tcp = {r.function: r for r in profile_diff(BASE, NEW)}["tcp_sendmsg"]
    # Its share rose, but per message it costs less: 2.0 -> 1.5 ticks.
    assert (tcp.base_ticks_per_work, tcp.new_ticks_per_work) == (2.0, 1.5)
    no_work = profile_diff(ProfileSide("a", "2.4.20", {"f": 1.0}), ProfileSide("b", "2.4.20", {}))
    assert all(r.base_ticks_per_work is None for r in no_work)


def test_the_scheduler_and_idle_sets_are_one_line_each_on_top():
    rows = profile_diff(BASE, NEW)
    assert [(r.function, r.status) for r in rows[:2]] == [
        (SCHEDULER_LINE, "set"),
        (IDLE_LINE, "set"),
    ]
    sched, idle = rows[0], rows[1]
    assert (sched.base_ticks, sched.new_ticks) == (500.0, 150.0)  # schedule+goodness; +fbq
    # The scheduler's share is of busy ticks, as readprofile's scheduler_pct: 500 of 600.
    assert sched.base_share_pct == pytest.approx(500 / 600 * 100) and not sched.idle
    assert (idle.base_ticks, idle.new_ticks, idle.idle) == (400.0, 700.0, True)
    assert "goodness" in scheduler_functions("2.4.20")
    assert "pick_next_task_fair" in scheduler_functions("6.1.0")
    assert "pick_next_task_fair" not in scheduler_functions("2.5.59")


def test_002_tables_idle_never_leads_and_busy_shares_are_of_busy_ticks():
    rows = profile_diff(TABLE_5, TABLE_6)
    movers = top_movers(rows, n=20)
    assert "default_idle" not in [r.function for r in movers]
    busy_5, busy_6 = 12335 - 7071, 55359 - 54048  # listed ticks less default_idle's
    schedule = next(r for r in movers if r.function == "schedule")
    assert schedule.base_share_pct == pytest.approx(2388 / busy_5 * 100)  # 45.36 %
    assert schedule.new_share_pct == pytest.approx(397 / busy_6 * 100)  # 30.28 %
    deltas = [abs(r.delta_share_pp) for r in movers]
    assert deltas == sorted(deltas, reverse=True)
    # The busy shares of each side add up to 100: idle no longer scales them.
    assert sum(r.base_share_pct for r in movers) == pytest.approx(100)
    assert sum(r.new_share_pct for r in movers) == pytest.approx(100)
    idle = idle_rows(rows)
    assert [r.function for r in idle] == [IDLE_LINE, "default_idle"]
    assert idle[0].base_share_pct == pytest.approx(7071 / 12335 * 100)  # 57.32 % of all
    assert idle[0].new_share_pct == pytest.approx(54048 / 55359 * 100)  # 97.63 %


def test_idle_is_the_set_of_either_sides_era():
    """A 2.4 profile against a 6.x one: cpu_idle (2.x) and intel_idle (modern) are both idle."""
    old = ProfileSide("2.4.20", "2.4.20", {"cpu_idle": 10.0, "schedule": 10.0})
    new = ProfileSide("6.1.0", "6.1.0", {"intel_idle": 30.0, "__schedule": 10.0})
    rows = profile_diff(old, new)
    assert {r.function for r in idle_rows(rows)} == {IDLE_LINE, "cpu_idle", "intel_idle"}
    assert [r.function for r in top_movers(rows)] == ["__schedule", "schedule"]


def test_movers_are_ranked_by_change_in_share_and_ties_by_name():
    side = ProfileSide("a", "2.4.20", {"b": 10.0, "a": 30.0, "c": 60.0})
    other = ProfileSide("b", "2.4.20", {"b": 30.0, "a": 10.0, "c": 60.0})
    assert [r.function for r in top_movers(profile_diff(side, other), n=3)] == ["a", "b", "c"]


def test_pool_adds_trials():
    assert pool([("schedule", 10.0), ("goodness", 5.0), ("schedule", 2.5)]) == {
        "schedule": 12.5,
        "goodness": 5.0,
    }
