"""perfdb.features.attribution: which patch of a stack moved the metric, judged by
perfdb.detector.policy."""

from __future__ import annotations

import pytest

from perfdb.features.attribution import attribute

STOCK = (100.0, 101.0, 99.0, 100.0)


def test_prefixes_name_the_patch_that_moved_it():
    builds = {
        (): STOCK,
        ("p1",): (100.5, 99.5, 100.0, 101.0),
        ("p1", "p2"): (90.0, 91.0, 89.0, 90.0),
    }
    a = attribute("2.5.66", ("p1", "p2"), builds, "higher")
    assert [s.method for s in a.steps] == ["prefix", "prefix"]
    assert a.culprit == "p2"
    assert a.message.startswith("p2 moved it: -10.2 % on top of p1 (") and a.needed == ()
    assert a.total is not None and a.total.direction == "regression"
    # prefix steps add up to the stack
    assert sum(s.delta for s in a.steps) == pytest.approx(a.stack_mean - a.stock_mean)


def test_the_first_patch_of_a_stack_is_measured_against_stock():
    builds = {(): STOCK, ("p1",): (80.0, 81.0, 79.0, 80.0), ("p2",): STOCK}
    a = attribute("2.5.66", ("p1", "p2"), builds, "higher")
    assert a.steps[0].method == "prefix" and a.culprit == "p1"
    assert a.message.startswith("p1 moved it: -20.0 % against stock (")


def test_each_patch_alone_when_prefixes_are_missing():
    low = (80.0, 81.0, 79.0, 80.0)
    builds = {(): STOCK, ("p1",): STOCK, ("p2",): STOCK, ("p3",): low, ("p1", "p2", "p3"): low}
    a = attribute("2.5.66", ("p1", "p2", "p3"), builds, "higher")
    assert [s.method for s in a.steps] == ["prefix", "alone", "alone"]
    assert a.culprit == "p3"


def test_cannot_tell_says_which_run_would_settle_it():
    builds = {(): STOCK, ("p1", "p2"): (80.0, 81.0, 79.0, 80.0)}
    a = attribute("2.5.66", ("p1", "p2"), builds, "higher", direction="regression")
    assert a.culprit is None
    assert "run 2.5.66 + p1 alone" in a.needed and "run 2.5.66 + p2 alone" in a.needed
    assert a.total is not None and a.total.significant


def test_second_prefix_missing_asks_for_it():
    builds = {(): STOCK, ("p1",): STOCK, ("p1", "p2", "p3"): (80.0, 81.0, 79.0, 80.0)}
    a = attribute("2.5.66", ("p1", "p2", "p3"), builds, "higher")
    assert a.steps[1].needed == "run 2.5.66 + p1+p2"
    assert a.culprit is None and "untested" in a.message


def test_single_values_are_not_tested():
    # 002 Table 8: one value a side says nothing of the noise: no test, whatever the size
    for value in (104.3, 90.0):
        builds = {(): (100.0,), ("trytowakeup1",): (value,)}
        a = attribute("2.5.66", ("trytowakeup1",), builds, "higher")
        assert a.steps[0].verdict.method == "untested" and not a.steps[0].verdict.significant
        assert "3 trials" in a.steps[0].verdict.reason
        assert a.culprit is None


def test_interaction_without_a_single_culprit():
    builds = {
        (): STOCK,
        ("p1",): (99.0, 100.0, 98.0, 99.0),
        ("p2",): (99.0, 100.0, 98.0, 99.5),
        ("p1", "p2"): (80.0, 81.0, 79.0, 80.0),
    }
    a = attribute("2.6.0", ("p1", "p2"), builds, "higher")
    assert a.steps[1].method == "prefix"  # p1 then p1+p2 is a prefix pair
    assert a.culprit == "p2"
    alone = attribute(
        "2.6.0", ("p2", "p1"), {k: v for k, v in builds.items() if k != ("p2",)}, "higher"
    )
    assert alone.steps[0].method == "unmeasured"
