"""One series' answers (the /kernels/ page's data, its figure, its downloads, /api/series/),
finished once and served from the cache until runs are added to the series' scope.

A series is one setup's runs, so only runs added to that setup can change it: every value
here but the scope's setup picker is cached with ``perfdb.cache.cached_in_setup``, whose
stamp moves with that setup's version (the writer bumps it when the upload commits) and
with the structure version (runs edited or deleted, vocabulary edited). An upload to the
other setups of its scope leaves the series current. A warm request then reads no results
at all and renders nothing, in one cache round trip: a 1,000-point series costs what a
10-point one does. What is cached is bytes or plain dataclasses, never model rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import cached_property
from itertools import chain
from typing import Any, TypeVar

from django.utils.html import escape

from dashboards import chart_queries as cq
from dashboards.chart_queries.kernel_series import OrderKey, series_added
from dashboards.chartdata import Baseline, Metric, Point, RunInfo, Series
from dashboards.figures.kernels import PointJSON, across_kernels_json, point_json
from dashboards.page_tools import run_text
from dashboards.selection import BadParam, KernelsQuery, metric_asked
from perfdb.cache import (
    cached_in_scope,
    cached_in_setup,
    cached_per_setup,
    read_ahead,
    read_together,
    scope_key,
    setup_entry,
    setup_keys,
)

T = TypeVar("T")
# Each setup's metric ids, cached per setup (``metrics_of_setups``).
METRIC_IDS = "series:setup-metric-ids"


def setup_scope(setup: Mapping[str, Any]) -> str:
    """The scope whose version a value of this setup is cached under."""
    return scope_key(setup["workload_id"], setup["hardware_id"], setup["mode"])


# A point as kept: its run's keys, then its value and sd (``_row``): plain values, which
# pickle ten times faster than a ``Point`` with its ``RunInfo``.
Row = tuple[int, str, tuple[str, ...], str, str, int, tuple[tuple[str, str], ...], str, float, Any]


@dataclass(frozen=True)
class FinishedSeries:
    """A series as kept between uploads: its points as plain rows in kernel order
    (``order``: ``cq.KernelSeries``' keys), and the finished text of each point, by run id:
    its point in /api/series/ (JSON), its baseline ``<option>`` and its pieces of the
    figure without baseline (``figures.kernels.PointJSON``: its values and hover text as
    JSON, kept as one text: ``_kept``). A point's texts do not depend on its place or on
    the other points, so a series brought up to date after an upload keeps its points and
    their texts and makes only the new points': the answers are joined from them, not
    written again point by point, and the ``Point`` objects (``data``) are made only for
    what draws them otherwise (a baseline, the alert marks, the downloads)."""

    metric: Metric
    order: tuple[OrderKey, ...]
    runs: frozenset[int]
    labels: dict[int, str]
    rows: dict[int, Row]
    api: dict[int, str]
    option: dict[int, str]
    figure: dict[int, str]

    @cached_property
    def data(self) -> cq.KernelSeries:
        """The series as ``cq.series_points`` gives it (equal to a whole read)."""
        points = tuple(_point(self.rows[key[3]]) for key in self.order)
        series = Series(metric=self.metric, kernels=self.kernels, points=points)
        return cq.KernelSeries(series, dict(self.labels), self.order, self.runs)

    @property
    def kernels(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(key[1] for key in self.order))

    def values(self) -> dict[int, float]:
        """Each run's value (the page's baseline check)."""
        return {run_id: row[8] for run_id, row in self.rows.items()}

    def of_runs(self, run_ids: Collection[int]) -> Series:
        """The series with only these runs' points (what alert marks are drawn on)."""
        keys = [key for key in self.order if key[3] in run_ids]
        points = tuple(_point(self.rows[key[3]]) for key in keys)
        kernels = tuple(dict.fromkeys(key[1] for key in keys))
        return Series(metric=self.metric, kernels=kernels, points=points)

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "data"}  # made again on use


def _row(point: Point) -> Row:
    run = point.run
    return (
        run.run_id,
        run.kernel,
        run.patches,
        run.hardware,
        run.mode,
        run.n_trials,
        run.params,
        run.notes,
        point.value,
        point.sd,
    )


_RUN_FIELDS = tuple(f.name for f in fields(RunInfo))


def _point(row: Row) -> Point:
    """The row's ``Point``, equal to the one ``cq.series_points`` made. Its two frozen
    dataclasses are filled through their ``__dict__``: their ``__init__`` sets each field
    through ``object.__setattr__``, half of a 1,000-point figure's making of its points."""
    run = object.__new__(RunInfo)
    run.__dict__.update(zip(_RUN_FIELDS, row, strict=False))
    point = object.__new__(Point)
    point.__dict__.update(run=run, value=row[8], sd=row[9])
    return point


def series(setup_id: int, metric: Mapping[str, Any]) -> cq.KernelSeries:
    """``series_points`` of the setup and metric (``finished_series``' data)."""
    return finished_series(setup_id, metric).data


def finished_series(setup_id: int, metric: Mapping[str, Any]) -> FinishedSeries:
    """``series_points`` of the setup and metric with its points' texts, cached per setup.
    Keyed by the metric's id alone (its name and unit are vocabulary: editing them moves
    every version), so that a page can read it before it knows them (``page_keys``); the
    page, its figure, its downloads and /api/series/ share it, so an upload's series is read
    once whichever of them is asked first. After an upload to the setup it is brought up to
    date from the value cached before (only the runs added are read and written as text),
    never served older than the upload. Untitled: the figure names it "<metric> across
    kernels"."""
    return cached_in_setup(
        _series_key(metric["id"]),
        setup_id,
        lambda: _read_and_finished(setup_id, metric, None),
        update=lambda since: _read_and_finished(setup_id, metric, since),
    )


def _series_key(metric_id: int) -> str:
    return f"series:finished:{metric_id}"


def _read_and_finished(
    setup_id: int, metric: Mapping[str, Any], since: FinishedSeries | None
) -> FinishedSeries:
    """The series read, then finished: with ``since`` (the series kept before runs were
    added to the setup), only the runs added since are read and finished, merged into it;
    read whole without it, or if one of its runs is gone."""
    added = None
    if since is not None:
        added = series_added(setup_id=setup_id, metric=metric, known=since.runs)
    if added is None:
        return _finished(cq.series_points(setup_id=setup_id, metric=metric), None)
    return _finished(added, since)


def _finished(data: cq.KernelSeries, since: FinishedSeries | None) -> FinishedSeries:
    """``data``'s points with their texts, merged into ``since``'s (kept as they are)."""
    order, labels = data.order, data.labels
    rows: dict[int, Row] = {}
    api: dict[int, str] = {}
    option: dict[int, str] = {}
    figure: dict[int, str] = {}
    if since is not None:  # two sorted runs: Timsort merges them in linear time
        order = tuple(sorted(chain(since.order, order))) if order else since.order
        labels = {**since.labels, **labels}
        rows, api, option, figure = (
            dict(since.rows),
            dict(since.api),
            dict(since.option),
            dict(since.figure),
        )
    metric = data.series.metric if since is None else since.metric
    for point in data.series.points:
        run_id = point.run.run_id
        label = data.labels.get(run_id) or ""
        rows[run_id] = _row(point)
        api[run_id] = api_point_json(point, label)
        text = escape(run_text(point.run, label))
        option[run_id] = f'<option value="{run_id}">relative: {text} = 100</option>'
        figure[run_id] = _kept(point_json(point, metric))
    return FinishedSeries(metric, order, data.runs, labels, rows, api, option, figure)


def _kept(piece: PointJSON) -> str:
    """A point's figure pieces as one text: a kept series is read, and stored again, by
    every answer computed after an upload, and 1,000 texts pickle seven times faster than
    1,000 tuples of six. Joined by newlines, which none of its JSON texts holds (written
    in ASCII, a newline escaped), its line's label first (it may hold one: ``_piece``
    splits from the right)."""
    return "\n".join(piece)


def _piece(text: str) -> PointJSON:
    line, x, y, sd, run, hover = text.rsplit("\n", 5)
    return line, x, y, sd, run, hover


def api_point(point: Point, x: float | None = None, label: str = "") -> dict[str, Any]:
    """A point as /api/series/ and /api/scaling/ give it."""
    run = point.run
    return {
        "run": run.run_id,
        "kernel": run.kernel,
        "patches": list(run.patches),
        "label": label,
        "hardware": run.hardware,
        "mode": run.mode,
        "x": x,
        "mean": point.value,
        "sd": point.sd,
        "n": run.n_trials,
    }


def api_json(value: Any) -> str:
    """``value`` as DRF's JSONRenderer writes it with the project's settings (compact,
    UTF-8, no NaN; U+2028/9 escaped for JavaScript), so that pieces written apart join into
    the bytes it would have written whole (tests/dashboards/test_series_update.py)."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def api_point_json(point: Point, label: str) -> str:
    return api_json(api_point(point, label=label))


def api_body(head: bytes, finished: FinishedSeries) -> bytes:
    """/api/series/'s JSON: ``head`` (its object up to the metric, without the closing
    brace: what does not change when runs are added), then the kernels and the points."""
    kernels = api_json(list(finished.kernels))
    joined = ",".join([finished.api[key[3]] for key in finished.order])
    return b"".join(
        (head, b',"kernels":', kernels.encode(), b',"points":[', joined.encode(), b"]}")
    )


def api_head(body: bytes) -> bytes:
    """The ``head`` of an /api/series/ JSON body (``api_body``): everything before its
    kernels. Their key is the last ``,"kernels":[`` of the body: after it come only
    kernel names and points, in which such text can only be inside a string, where its
    quotes are escaped."""
    return body[: body.rindex(b',"kernels":[')]


def api_head_metric(head: bytes) -> dict[str, Any]:
    """The metric an ``api_body`` head names (its last value: ``"metric":{...}``), as
    ``finished_series`` takes it."""
    metric = json.loads(head[head.rindex(b',"metric":{') + len(b',"metric":') :])
    return {k: metric[k] for k in ("id", "name", "unit", "better")}


def baseline_options(finished: FinishedSeries) -> str:
    """Every run of the series as a baseline ``<option>`` (a 1,000-run series: 1,000 of
    them), joined from the points' texts; only the chosen one's ``selected`` is added per
    request."""
    return "".join([finished.option[key[3]] for key in finished.order])


def page_keys(setup_id: int, context_key: str, metric_id: int | None) -> list[str]:
    """The cache keys of a series page's context (``context_key``, cached per setup) and of
    the parts it is made of: the setup's metric ids and, when the page names its metric,
    the series. Read together (perfdb.cache.reads ``read_together``), a context computed
    after an upload costs one read for all three, not one each."""
    keys = read_ahead(setup_entry(context_key, setup_id)) + setup_keys(METRIC_IDS, [setup_id])
    if metric_id is not None:
        keys += read_ahead(setup_entry(_series_key(metric_id), setup_id))
    return keys


def finished(
    kind: str,
    setup_id: int,
    key: str,
    build: Callable[[], T],
    found: Mapping[str, Any] | None = None,
    update: Callable[[T], T] | None = None,
) -> T:
    """``build()``'s bytes (a response body, or a tuple holding one), cached per version of
    the setup. ``key`` must name everything else the body depends on (metric, baseline,
    format). A hit needs nothing else: no setup or metric query (``build`` reads them, and
    raises a 404 or 400 for a setup or metric that does not exist, which is then not
    stored). ``found``: the cache's values of ``finished_keys(...)``, read by the caller
    with its own. ``update``: the body from the one of before runs were added to the setup
    (perfdb.cache ``cached_in_setup``), e.g. with what does not change kept, not read
    again."""
    return cached_in_setup(f"series:{kind}:{key}", setup_id, build, found, update)


def series_keys(setup_id: int, metric_id: int) -> list[str]:
    """The cache keys ``finished_series(setup_id, {"id": metric_id, ...})`` reads."""
    return read_ahead(setup_entry(_series_key(metric_id), setup_id))


def figure_keys(setup_id: int, metric: str) -> list[str]:
    """The cache keys a figure of the setup computed after an upload reads besides its
    own (kernels ``_figure``): the setup's metric ids and, when the query gives the metric
    as an id, the series it is joined from."""
    keys = setup_keys(METRIC_IDS, [setup_id])
    if metric.isascii() and metric.isdigit():
        keys += series_keys(setup_id, int(metric))
    return keys


def finished_keys(kind: str, setup_id: int, key: str) -> list[str]:
    """The cache keys ``finished(kind, setup_id, key, ...)`` reads."""
    return read_ahead(setup_entry(f"series:{kind}:{key}", setup_id))


def figure_json(data: FinishedSeries, baseline: Baseline | None) -> bytes:
    """The across-kernels figure as the JSON Plotly takes: joined from the points' kept
    pieces (``FinishedSeries.figure``) when there is no baseline; with one, whose values and
    hover texts say each point's % of it, from pieces made for it."""
    if baseline is None:
        points = [_piece(data.figure[key[3]]) for key in data.order]
    else:
        points = [point_json(p, data.metric, baseline) for p in data.data.series.points]
    return across_kernels_json(data.metric, data.kernels, points, baseline).encode()


def metric_choices(setup: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The setup's metrics (the page's picker): its metric ids cached per setup, then one
    query for their names. Called inside answers cached per setup version themselves."""
    return metrics_of_setups([setup["id"]])


def metrics_of_setups(setup_ids: Sequence[int]) -> list[dict[str, Any]]:
    """``cq.metric_choices`` of these setups (the metrics with results in any of them);
    which metrics each setup has is cached per setup version, so after an upload only the
    setups it wrote to are read again (one index-only query), where an EXISTS probe per
    metric over a scope's hundred setups had been the slowest read of a scope chart
    computed after an upload (py-spy on bench/load.py)."""
    per_setup = cached_per_setup(
        METRIC_IDS, setup_ids, lambda todo: cq.metrics_by_setup(setup_ids=todo)
    )
    return cq.metrics_ordered(m for ids in per_setup.values() for m in ids)


def setup_choices(scope: tuple[int, int, str]) -> list[dict[str, Any]]:
    """The scope's setups with their run counts (the page's second picker), cached per scope."""
    workload_id, hardware_id, mode = scope
    return cached_in_scope(
        "series:setups",
        scope_key(workload_id, hardware_id, mode),
        lambda: cq.setup_choices(scope=scope),
    )


def kernels_page(setup_id: int, query: KernelsQuery) -> dict[str, Any]:
    """What the /kernels/ page shows of the setup's series: the setup (a 400 when it has no
    runs), its metrics as the picker's ``<option>``s, the metric chosen (and the note when
    the one asked for has no data here), each run's value and the baseline options; the
    query's baseline checked against them (a 400 here, not in the figure's request).

    Cached whole per setup version under the metric asked for, so its parts are not cached
    again one by one: a warm page reads it in one round trip, no query, and one computed
    after an upload reads its parts (``page_keys``) in that same round trip."""
    key = f"series:page-context:{query.metric}"

    def build() -> dict[str, Any]:
        setup = setup_with_runs(setup_id)
        metrics = metric_choices(setup)
        metric, note = metric_asked(query.metric, metrics)
        values: dict[int, float] = {}
        options = ""
        if metric is not None:
            finished = finished_series(setup_id, metric)
            values, options = finished.values(), baseline_options(finished)
        metric_options = "".join(
            f'<option value="{m["id"]}">{escape(m["name"])} ({escape(m["unit"])})</option>'
            for m in metrics
        )
        return {
            "setup": setup,
            "metric_options": metric_options,
            "metric": metric,
            "note": note,
            "values": values,
            "options": options,
        }

    with read_together(page_keys(setup_id, key, query.metric_id)):
        context = cached_in_setup(key, setup_id, build)
    run_id = query.baseline
    if run_id is not None and context["metric"] is not None:
        if run_id not in context["values"]:
            raise BadParam("baseline", f"run {run_id} is not in this series")
        if context["values"][run_id] == 0:
            raise BadParam("baseline", f"run {run_id} has the value 0; nothing is % of 0")
    return context


def setup_with_runs(setup_id: int) -> dict[str, Any]:
    """The setup as the pickers list it; a 400 when it has no runs."""
    found = cq.setup_choices(setup_id=setup_id)
    if not found:
        raise BadParam("setup", f"no setup {setup_id} with runs")
    return found[0]
