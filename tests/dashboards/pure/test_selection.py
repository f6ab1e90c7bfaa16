"""Names where ids are (dashboards/pure/selection.py): a metric, a set-up and a build by name,
and a 400 that says what is unknown or ambiguous. Pure: no database.

A scope's parameters: those that vary, the usual x axis first, and the groups holding the
others fixed."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from dashboards.pure.selection import (
    BadParam,
    KernelsQuery,
    SetupKey,
    build_param,
    metric_param,
    setup_of_key,
    setup_ref_param,
)

METRICS = [
    {"id": 1, "name": "events_per_s", "unit": "events/s", "better": "higher"},
    {"id": 2, "name": "events_per_s", "unit": "ops/s", "better": "higher"},
    {"id": 3, "name": "latency_p99", "unit": "us", "better": "lower"},
]


@pytest.mark.parametrize(
    "raw, expected",
    [("3", 3), ("latency_p99", 3), ("events_per_s (ops/s)", 2), ("", 1), ("99", 1)],
)
def test_a_metric_by_id_or_name(raw, expected):
    metric, _ = metric_param({"metric": raw}, METRICS)
    assert metric is not None and metric["id"] == expected


@pytest.mark.parametrize(
    "raw, says",
    [
        ("events_per_s", "is in 2 units: events_per_s (events/s), events_per_s (ops/s)"),
        ("throughput", "no metric 'throughput' here; these have results: events_per_s"),
    ],
)
def test_a_metric_name_unknown_or_in_two_units_is_refused_saying_so(raw, says):
    with pytest.raises(BadParam, match="metric") as error:
        metric_param({"metric": raw}, METRICS)
    assert says in error.value.message


SETUPS = [
    {"id": 7, "params": {"rooms": 10, "messages": 1000}},
    {"id": 8, "params": {"rooms": 20, "messages": 1000}},
    {"id": 9, "params": {"rooms": 10, "messages": 1000, "server_nice": -19}},
]


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("12", 12),
        ("VolanoMark/P8/UP", SetupKey("VolanoMark", "P8", "UP")),
        (
            "VolanoMark 2.1.2/P8/SMP/rooms=10",
            SetupKey("VolanoMark 2.1.2", "P8", "SMP", (("rooms", "10"),)),
        ),
        ("", None),
    ],
)
def test_a_setup_by_id_or_readable_key(raw, expected):
    assert setup_ref_param({"setup": raw}) == expected


@pytest.mark.parametrize(
    "params, expected",
    [
        ((("rooms", "20"),), 8),
        ((("server_nice", "-19"),), 9),
        ((("rooms", "10"), ("messages", "1000")), 7),
    ],
)
def test_a_keys_parameters_pick_one_setup(params, expected):
    assert setup_of_key(SetupKey("V", "P8", "UP", params), SETUPS)["id"] == expected


@pytest.mark.parametrize(
    "params, says",
    [
        ((), "matches 3 set-ups"),
        ((("rooms", "10"),), "matches 2 set-ups"),
        ((("rooms", "5"),), "no set-up"),
    ],
)
def test_a_key_naming_no_setup_or_several_is_refused_saying_so(params, says):
    with pytest.raises(BadParam, match=says):
        setup_of_key(SetupKey("V", "P8", "UP", params), SETUPS)


@pytest.mark.parametrize("raw", ["V/P8", "V//UP", "V/P8/UP/rooms"])
def test_a_malformed_setup_key_is_refused(raw):
    with pytest.raises(BadParam, match="setup"):
        setup_ref_param({"setup": raw})


def test_a_build_by_name_gives_its_runs_or_names_the_near_ones():
    builds = {"6.8.0": [1, 2], "6.8.0+fix": [3], "6.7.0": [4]}
    assert build_param({"new_build": "6.8.0+fix"}, "new_build", builds) == [3]
    assert build_param({}, "new_build", builds) == []
    with pytest.raises(
        BadParam, match=r"no build '6.8.0\+nope' in this set-up; it has 6.8.0, 6.8.0\+fix"
    ):
        build_param({"new_build": "6.8.0+nope"}, "new_build", builds)


def test_the_kernels_query_is_read_whole_once():
    query = KernelsQuery.read(
        {"setup": "V/P8/UP/rooms=10", "scope": "1-2-UP", "metric": " 3", "baseline": "7"}
    )
    assert query == KernelsQuery(SetupKey("V", "P8", "UP", (("rooms", "10"),)), None, " 3", 7, None)
    assert query.setup_id is None and query.metric_id == 3
    by_id = KernelsQuery.read({"setup": "4", "metric": "events_per_s", "format": "csv"})
    assert (by_id.setup_id, by_id.metric_id, by_id.format) == (4, None, "csv")


@pytest.mark.parametrize(
    "query, param",
    [
        ({"baseline": "x"}, "baseline"),
        ({"format": "pdf"}, "format"),
        ({"format": "csv", "chart": "other"}, "chart"),
        ({"setup": "V/P8"}, "setup"),
    ],
)
def test_a_malformed_kernels_parameter_is_refused_naming_it(query, param):
    with pytest.raises(BadParam) as refused:
        KernelsQuery.read(query)
    assert refused.value.name == param


def test_the_kernels_scope_is_matched_only_when_no_setup_is_named():
    class Scope(NamedTuple):
        key: str
        ids: tuple[int, int, str]

    scopes = [Scope("1-2-UP", (1, 2, "UP")), Scope("1-2-SMP", (1, 2, "SMP"))]
    asked: list[int] = []

    def read() -> list[Scope]:
        asked.append(1)
        return scopes

    assert KernelsQuery.read({"scope": "1-2-SMP"}, read).scope == scopes[1]
    assert KernelsQuery.read({"setup": "4", "scope": "9-9-UP"}, read).scope is None
    assert len(asked) == 1, "the scopes are read only to match a scope"
    with pytest.raises(BadParam, match="names no workload/hardware/mode with runs"):
        KernelsQuery.read({"scope": "9-9-UP"}, read)


def test_a_chart_is_checked_only_for_a_download():
    assert KernelsQuery.read({"chart": "other"}).format is None


def test_scaling_holds_the_other_parameters_fixed():
    from dashboards.pure.selection import Scope

    def setup(i, **params):
        return {"id": i, "params": params}

    scope = Scope(
        "1-1-UP",
        "x",
        (
            setup(1, rooms=5, nice=0),
            setup(2, rooms=10, nice=0),
            setup(3, rooms=20, nice=0),
            setup(4, rooms=5, nice=-19),
            setup(5, rooms=10, nice=-19),
            setup(6, rooms=10, nice=19),  # one value of rooms: no line
        ),
    )
    assert scope.varying_params() == ["rooms", "nice"]  # the usual x axis first
    assert scope.held_fixed("rooms") == {"nice=0": [1, 2, 3], "nice=-19": [4, 5]}
