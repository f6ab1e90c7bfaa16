"""The across-kernels series' data: what the /kernels/ page shows, its figure with the
series' alert marks, its downloads, and the points of /api/series/, each read through the
cache (``perfdb.cache``) and finished once per version of the series' setup.

A /kernels/ query (``selection.KernelsQuery``) is answered in one call each, which chooses
its series and reads everything the answer needs: ``series_page`` (the pickers' choices and
the baseline options), ``series_figure`` (the figure's JSON, alert marks drawn in) and
``series_download`` (the table as CSV or JSON). The view renders or sends what it gets.

A series is one setup's runs, so only runs added to that setup can change it: every value
here but the scope's setup picker is cached with ``perfdb.cache.cached_in_setup``, whose
stamp moves with that setup's version (the writer bumps it when the upload commits) and
with the structure version (runs edited or deleted, vocabulary edited). A warm request
reads no results at all and renders nothing, in one cache round trip. After an upload the
series kept before is brought up to date with the runs added (``finished_series``), and so
are the answers made of it: each point's texts (its /api/series/ JSON, its baseline
``<option>``, its figure piece) are made once and kept, so an answer is joined from them.
The alert marks are kept apart under the series' alerts version, which every alert write
moves (``_marks``). What is cached is bytes or plain values, never model rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from functools import cached_property, partial
from itertools import chain
from typing import Any, NamedTuple, TypeVar

from django.core.serializers.json import DjangoJSONEncoder
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from dashboards import chart_queries as cq
from dashboards.chart_queries.kernel_series import OrderKey
from dashboards.figures import kernels as figure
from dashboards.page_data import scope_stats
from dashboards.page_data.scopes import ScopeChoice, scope_index
from dashboards.page_data.setup_picker import SETUP_OPTIONS, SETUPS, setup_choices
from dashboards.page_data.setup_picker import setup_options as picker_options
from dashboards.pure.chartdata import Baseline, Metric, Point, RunInfo, Series
from dashboards.pure.selection import BadParam, KernelsQuery, metric_asked
from dashboards.web import exports
from dashboards.web.page_tools import run_text
from perfdb.cache import (
    CATALOG,
    alerts_entry,
    cache_key,
    cached_in_alerts,
    cached_in_setup,
    cached_per_setup,
    read_ahead,
    read_together,
    scope_entry,
    scope_key,
    setup_entry,
    stored_together,
    updated_in_alerts,
    updated_in_setup,
)

T = TypeVar("T")
# Each setup's metric ids, cached per setup (``metrics_of_setups``).
METRIC_IDS = cache_key("series-setup-metric-ids")
# A baseline picker's ``<option>``, rendered once per point and kept with the series.
BASELINE_OPTION = "dashboards/_baseline_option.html"


# --- choosing the series --------------------------------------------------------------------


def _setup_id(query: KernelsQuery, open_regression: bool) -> tuple[int | None, str]:
    """The setup to chart (None when nothing has runs) and the metric asked for: the setup
    the query names, by id or by name (``setup=VolanoMark/P8/UP/rooms=10``, as the compare
    page takes it: a name no set-up or several have is a 400 saying which). Else, with
    ``open_regression`` (the page), the set-up and metric of the newest open regression in
    the query's scope, if any (a metric the query names is kept): one query, so such a
    page is computed on every request rather than kept, since an alert's triage moves no
    version. Else the busiest setup of the query's scope, else the busiest of all."""
    if query.setup is not None:
        return cq.setup_id_of(query.setup), query.metric
    scope = query.scope
    found = None
    if open_regression:
        found = cq.open_regression_series(scope=None if scope is None else scope.ids)
    if found is not None:
        return found[0], query.metric or str(found[1])
    if scope is None:
        return scope_stats.busiest_setup_cached(), query.metric
    setups = setup_choices({scope.key: scope.ids})[scope.key]
    return int(max(setups, key=lambda s: s["run_count"])["id"]), query.metric


def _baseline_checked(values: Mapping[int, float], run_id: int | None) -> None:
    """A 400 for a baseline that is not a run of the series, or whose value is 0."""
    if run_id is None:
        return
    if run_id not in values:
        raise BadParam("baseline", f"run {run_id} is not in this series")
    if values[run_id] == 0:
        raise BadParam("baseline", f"run {run_id} has the value 0; nothing is % of 0")


# --- the page -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeriesPage:
    """What the /kernels/ page shows: its pickers' choices (each chosen one marked by its
    value), the note when the metric asked for has no data here, and the baseline picker's
    options (rendered once per point, the chosen one selected). No ``setup``: nothing has
    runs; no ``metric``: the setup has no results."""

    scopes: Sequence[ScopeChoice] = ()
    scope: str = ""
    setups: Sequence[Mapping[str, Any]] = ()
    setup: Mapping[str, Any] | None = None
    metrics: Sequence[Mapping[str, Any]] = ()
    metric: Mapping[str, Any] | None = None
    note: str = ""
    baseline: int | None = None
    baseline_options: SafeString = SafeString("")
    setup_options: SafeString = SafeString("")

    @property
    def selection(self) -> dict[str, object]:
        """The series shown, by ids: what its permalink and its figure's URL name."""
        assert self.setup is not None and self.metric is not None
        return {"setup": self.setup["id"], "metric": self.metric["id"], "baseline": self.baseline}


def series_page(query: KernelsQuery) -> SeriesPage:
    """The page of the query's series. Its setup with its metrics and the metric chosen
    are cached per setup version under the metric asked for, beside the baseline picker's
    options joined (or, with a baseline chosen, the series): a warm page reads both in one
    round trip, no query, and one computed after an upload reads its setup and metrics in
    one query and brings the series up to date. The query's baseline is checked here (a
    400), not in the figure's request."""
    setup_id, asked = _setup_id(query, open_regression=True)
    if setup_id is None:
        return SeriesPage()
    key = _page_context_key(asked)
    keys = read_ahead(setup_entry(key, setup_id))
    if asked.isascii() and asked.isdigit():
        metric_id = int(asked)
        keys += (
            read_ahead(setup_entry(_options_key(metric_id), setup_id))
            if query.baseline is None
            else series_keys(setup_id, metric_id)
        )
    with stored_together():  # after an upload: what it brought up to date, in one store
        with read_together(keys):
            setup, metrics, metric, note = cached_in_setup(
                key, setup_id, lambda: _page_context(setup_id, asked)
            )
            options = "" if metric is None else _page_options(setup_id, metric, query.baseline)
        scope = setup_scope(setup)
        ids = (setup["workload_id"], setup["hardware_id"], setup["mode"])
        # the two pickers of its scope, in one round trip (after an upload: its setups')
        picker_keys = read_ahead(
            scope_entry(scope_stats.SCOPE_ROWS, CATALOG)
            | scope_entry(SETUPS, scope)
            | scope_entry(SETUP_OPTIONS, scope)
        )
        with read_together(picker_keys):
            scopes, setups = scope_index().scopes, setup_choices({scope: ids})[scope]
            setup_options = picker_options(scope, setups, setup["id"])
    return SeriesPage(
        scopes=scopes,
        scope=scope,
        setups=setups,
        setup=setup,
        metrics=metrics,
        metric=metric,
        note=note,
        baseline=query.baseline,
        baseline_options=mark_safe(options),  # noqa: S308 (each rendered by BASELINE_OPTION)
        setup_options=setup_options,
    )


# What a page shows of its setup, kept per setup version: the setup, its metrics and the
# metric shown (None: the setup has no results), with the note when it is not the one asked.
PageContext = tuple[dict[str, Any], list[dict[str, Any]], Mapping[str, Any] | None, str]


def _page_context_key(asked: str) -> str:
    return cache_key("series-page-context", metric=asked)


def _page_context(setup_id: int, asked: str) -> PageContext:
    setup, metrics = _setup_metrics(setup_id)
    metric, note = metric_asked(asked, metrics)
    return setup, metrics, metric, note


def _options_key(metric_id: int) -> str:
    return cache_key("series-page-options", metric=metric_id)


def _page_options(setup_id: int, metric: Mapping[str, Any], baseline: int | None) -> str:
    """The baseline picker's options, ``baseline`` selected (checked: a 400 if the series
    has no such run). Without one, as kept per setup version with the metric they are of:
    the page reads them, not the series behind them."""
    if baseline is None:
        options_of = lambda: _options_of(setup_id, metric)  # noqa: E731
        return cached_in_setup(_options_key(metric["id"]), setup_id, options_of)[1]
    data = finished_series(setup_id, metric)
    _baseline_checked(data.values(), baseline)
    return _baseline_options(data, baseline)


def _options_of(setup_id: int, metric: Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    return metric, _baseline_options(finished_series(setup_id, metric), None)


def _baseline_options(data: FinishedSeries, chosen: int | None) -> str:
    """The baseline ``<option>``s, each as rendered once when its point was finished, the
    chosen one rendered again selected: a 1,000-run series' options are joined, not
    rendered on every request."""
    options = [data.option[key[3]][1] for key in data.order]
    if chosen is not None:
        index = [key[3] for key in data.order].index(chosen)
        options[index] = _baseline_option(chosen, data.option[chosen][0], selected=True)
    return "".join(options)


def _baseline_option(run_id: int, text: str, selected: bool = False) -> str:
    context = {"run_id": run_id, "text": text, "selected": selected}
    return render_to_string(BASELINE_OPTION, context).strip()


# --- the figure -----------------------------------------------------------------------------


class KeptFigure(NamedTuple):
    """A figure as kept per setup version: its metric (as the pickers give it), its JSON
    and, without a baseline, each point's piece of it by run id
    (``figures.kernels.across_kernels_kept``), from which it is joined again after runs are
    added."""

    metric: Mapping[str, Any]
    body: bytes
    pieces: dict[int, str]


def series_figure(query: KernelsQuery) -> bytes:
    """The query's figure as JSON, its series' alert marks drawn over it. Cached per setup
    version under the metric and baseline asked for when the query names its setup (what
    the page asks), the marks per version of the setup's alerts: a warm request is one
    cache round trip, no query. After an upload to the setup, the figure kept before is
    brought up to date: its metric is known, the series is read from the cache, and only
    the new points' pieces are made (by the writer's process, ``series_after_upload``,
    unless a reader comes first)."""
    setup_id, asked = _setup_id(query, open_regression=False)
    if setup_id is None:
        raise BadParam("setup", "no setup with runs")
    if query.setup is None:  # chosen by a query: as current as that query
        kept = _figure(setup_id, asked, query.baseline, None)
        return _with_marks(setup_id, kept, query.baseline)
    key = _figure_key(asked, query.baseline)
    keys = read_ahead(setup_entry(key, setup_id))
    if asked.isascii() and asked.isdigit():
        metric_id = int(asked)
        keys += _marks_keys(setup_id, metric_id, query.baseline)
    with read_together(keys):
        kept = cached_in_setup(
            key,
            setup_id,
            lambda: _figure(setup_id, asked, query.baseline, None),
            update=lambda before: _figure(setup_id, asked, query.baseline, before),
        )
        return _with_marks(setup_id, kept, query.baseline)


def _figure_key(asked: str, baseline_id: int | None) -> str:
    return cache_key("series-figure-of-query", metric=asked, baseline=baseline_id)


def _figure(
    setup_id: int, asked: str, baseline_id: int | None, before: KeptFigure | None
) -> KeptFigure:
    """The figure of the setup's metric ``asked``. ``before``: the figure kept before runs
    were added to the setup (its metric still has results there: removing runs moves the
    structure version, and then nothing of before is used), so neither the setup nor its
    metrics are read again."""
    if before is None:
        metric, _ = metric_asked(asked, _setup_metrics(setup_id)[1])
        if metric is None:
            raise BadParam("metric", "this setup has no results")
    else:
        metric = before.metric
    data = finished_series(setup_id, metric)
    baseline = _baseline(data, baseline_id)
    if baseline is None:
        kept = {} if before is None else before.pieces
        added = [_point(data.rows[run_id]) for run_id in data.rows if run_id not in kept]
        order = [key[3] for key in data.order]
        body, pieces = figure.across_kernels_kept(data.metric, data.kernels, order, kept, added)
        return KeptFigure(metric, body.encode(), pieces)
    body = figure.across_kernels_json_of(data.data.series, baseline)
    return KeptFigure(metric, body.encode(), {})


def _baseline(data: FinishedSeries, run_id: int | None) -> Baseline | None:
    if run_id is None:
        return None
    _baseline_checked(data.values(), run_id)
    return Baseline(value=data.values()[run_id], label=data.labels.get(run_id) or f"run #{run_id}")


def _marks_key(metric_id: int, baseline_id: int | None) -> str:
    return cache_key("series-alert-marks", metric=metric_id, baseline=baseline_id)


def _marks_keys(setup_id: int, metric_id: int, baseline_id: int | None) -> list[str]:
    return read_ahead(alerts_entry(_marks_key(metric_id, baseline_id), setup_id, metric_id))


def _with_marks(setup_id: int, kept: KeptFigure, baseline_id: int | None) -> bytes:
    marks = series_marks(setup_id, kept.metric, baseline_id)
    return figure.with_marks(kept.body, marks)


def series_marks(setup_id: int, metric: Mapping[str, Any], baseline_id: int | None) -> bytes:
    """The alert marks of the setup's metric as figure traces (``figures.kernels.
    alert_marks``, scaled like the figure by its baseline run, if any), their JSON
    comma-joined without the list's brackets (empty without an alert). Cached under the
    series' alerts version: a triage is shown by the next request, and runs added leave
    them current (a point of an existing run changes only when the run is edited, which
    moves the structure version), so the first figure after an upload reads no alert. One
    query for the alerts; the series is read from its cache, and not at all without an
    alert. After the alerts of the series were written (an upload's check), the marks of
    the page's figure are drawn by the writer (``marks_after_alerts``)."""
    metric_id = metric["id"]
    build = lambda: _marks(setup_id, metric_id, baseline_id)  # noqa: E731
    return cached_in_alerts(_marks_key(metric_id, baseline_id), setup_id, metric_id, build)


def _marks(setup_id: int, metric_id: int, baseline_id: int | None) -> bytes:
    found = cq.series_alert_marks(setup_id=setup_id, metric_id=metric_id)
    if not found.marks or found.metric is None:
        return b""
    data = finished_series(setup_id, found.metric)
    marked = data.of_runs({m.run_id for m in found.marks})
    baseline = _baseline(data, baseline_id)
    traces = figure.alert_marks(marked, found.marks, baseline)
    return json.dumps(traces, cls=DjangoJSONEncoder, separators=(",", ":")).encode()[1:-1]


def marks_after_alerts(series: Iterable[tuple[int, int]]) -> None:
    """The alert marks of these (setup id, metric id) series' figures as the page shows
    them (no baseline), drawn again where alerts were written (the check's worker, a
    triage), if someone reads them: the uploader's first look at the chart after the
    check finds them current. A series nobody read costs a cache read."""
    for setup_id, metric_id in series:
        build = partial(_marks, setup_id, metric_id, None)
        updated_in_alerts(_marks_key(metric_id, None), setup_id, metric_id, build)


# --- the download ---------------------------------------------------------------------------


def series_download(query: KernelsQuery) -> bytes:
    """The query's series as a table (``exports.series_table``) in its ``format``, cached
    per setup version."""
    fmt = query.format
    assert fmt is not None
    setup_id, asked = _setup_id(query, open_regression=False)
    if setup_id is None:
        raise BadParam("setup", "no setup with runs")

    def build() -> bytes:
        metric, _ = metric_asked(asked, _setup_metrics(setup_id)[1])
        if metric is None:
            raise BadParam("metric", "this setup has no results")
        table = exports.series_table(finished_series(setup_id, metric).data.series)
        return exports.table_text(table, fmt).encode()

    return finished(f"download-{fmt}", setup_id, asked, build)


# --- the series kept between uploads --------------------------------------------------------


def setup_scope(setup: Mapping[str, Any]) -> str:
    """The scope whose version a value of this setup is cached under."""
    return scope_key(setup["workload_id"], setup["hardware_id"], setup["mode"])


# A point as kept: its run's keys, then its value and sd (``_row``): plain values, which
# pickle ten times faster than a ``Point`` with its ``RunInfo``.
Row = tuple[int, str, tuple[str, ...], str, str, int, tuple[tuple[str, str], ...], str, float, Any]


@dataclass(frozen=True)
class FinishedSeries:
    """A series as kept between uploads: its points as plain rows in kernel order
    (``order``: ``cq.KernelSeries``' keys), and the finished texts of each point, by run
    id: its point in /api/series/ (JSON) and its baseline picker's text and ``<option>``.
    A point's texts do not depend on its place or on the other points, so a series brought
    up to date after an upload keeps its points and their texts and makes only the new
    points': the answers are joined from them, not written again point by point, and the
    ``Point`` objects (``data``) are made only for what draws them otherwise (a baseline,
    the alert marks, the downloads)."""

    metric: Metric
    order: tuple[OrderKey, ...]
    runs: frozenset[int]
    labels: dict[int, str]
    rows: dict[int, Row]
    api: dict[int, str]
    option: dict[int, tuple[str, str]]

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
    every version), so that a page can read it before it knows them (``series_keys``); the
    page, its figure, its downloads and /api/series/ share it, so an upload's series is
    read once whichever of them is asked first. After an upload to the setup it is brought
    up to date from the value cached before (only the runs added are read and written as
    text), never served older than the upload. Untitled: the figure names it "<metric>
    across kernels"."""
    return cached_in_setup(
        _series_key(metric["id"]),
        setup_id,
        lambda: _read_and_finished(setup_id, metric, None),
        update=lambda since: _read_and_finished(setup_id, metric, since),
    )


def _series_key(metric_id: int) -> str:
    return cache_key("series-finished", metric=metric_id)


def _read_and_finished(
    setup_id: int, metric: Mapping[str, Any], since: FinishedSeries | None
) -> FinishedSeries:
    """The series read, then finished: with ``since`` (the series kept before runs were
    added to the setup), only the runs added since are read and finished, merged into it;
    read whole without it, or if one of its runs is gone."""
    added = None
    if since is not None:
        added = cq.series_added(setup_id=setup_id, metric=metric, known=since.runs)
    if added is None:
        return _finished(cq.series_points(setup_id=setup_id, metric=metric), None)
    return _finished(added, since)


def _finished(data: cq.KernelSeries, since: FinishedSeries | None) -> FinishedSeries:
    """``data``'s points with their texts, merged into ``since``'s (kept as they are)."""
    order, labels = data.order, data.labels
    rows: dict[int, Row] = {}
    api: dict[int, str] = {}
    option: dict[int, tuple[str, str]] = {}
    if since is not None:  # two sorted runs: Timsort merges them in linear time
        order = tuple(sorted(chain(since.order, order))) if order else since.order
        labels = {**since.labels, **labels}
        rows, api, option = dict(since.rows), dict(since.api), dict(since.option)
    metric = data.series.metric if since is None else since.metric
    for point in data.series.points:
        run_id = point.run.run_id
        label = data.labels.get(run_id) or ""
        rows[run_id] = _row(point)
        api[run_id] = api_point_json(point, label)
        text = run_text(point.run, label)
        option[run_id] = (text, _baseline_option(run_id, text))
    return FinishedSeries(metric, order, data.runs, labels, rows, api, option)


# --- /api/series/'s points ------------------------------------------------------------------


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
    the bytes it would have written whole (tests/dashboards/page_data/test_series_data.py)."""
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


def api_updated(setup_id: int, before: bytes) -> bytes:
    """/api/series/'s JSON after runs were added to the setup, from ``before`` (its answer
    of before): its head (the setup and the metric, which adding runs does not change)
    with the kernels and points of now. No query for the setup or the metric."""
    head = api_head(before)
    return api_body(head, finished_series(setup_id, api_head_metric(head)))


def api_key(metric_id: int) -> str:
    """The key of /api/series/'s compact JSON answer (``finished("api-json", ...)``)."""
    return cache_key("metric", id=metric_id)


def api_head_metric(head: bytes) -> dict[str, Any]:
    """The metric an ``api_body`` head names (its last value: ``"metric":{...}``), as
    ``finished_series`` takes it."""
    metric = json.loads(head[head.rindex(b',"metric":{') + len(b',"metric":') :])
    return {k: metric[k] for k in ("id", "name", "unit", "better")}


# --- finished answers and their keys ----------------------------------------------------------


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
    return cached_in_setup(_finished_key(kind, key), setup_id, build, found, update)


def finished_keys(kind: str, setup_id: int, key: str) -> list[str]:
    """The cache keys ``finished(kind, setup_id, key, ...)`` reads."""
    return read_ahead(setup_entry(_finished_key(kind, key), setup_id))


def _finished_key(kind: str, key: str) -> str:
    return cache_key("series-answer", kind=kind, key=key)


def series_keys(setup_id: int, metric_id: int) -> list[str]:
    """The cache keys ``finished_series(setup_id, {"id": metric_id, ...})`` reads."""
    return read_ahead(setup_entry(_series_key(metric_id), setup_id))


# --- ahead of the first reader after an upload ----------------------------------------------


def series_after_upload(series: Iterable[tuple[int, int]]) -> None:
    """The answers of these (setup id, metric id) series that someone reads, brought up to
    date with the runs just added: the kept series, its /api/series/ JSON, and its page's
    context and figure as the page asks for them (by the metric's id, no baseline). Run in
    the writer's process right after its commit (dashboards/page_cache/warm.py
    ``after_commit``), so that the uploader's first look at the series finds it current.
    Only entries kept from before are touched, at the cost of the runs added; a series
    nobody reads costs four cache reads. A reader who comes meanwhile brings the same entries
    up to date itself (never served the previous value): this spares the first request
    the work, and never makes it wait."""
    for setup_id, metric_id in series:
        with stored_together():  # the series' answers in one store
            _brought_up_to_date(setup_id, metric_id)


def _brought_up_to_date(setup_id: int, metric_id: int) -> None:
    """Each answer kept from before, in the order the page reads them; the first that
    needs the series brings it up to date (``finished_series``), the others read it back
    from the store they share (``stored_together``)."""
    asked = str(metric_id)
    updated_in_setup(_page_context_key(asked), setup_id, lambda _: _page_context(setup_id, asked))
    updated_in_setup(
        _figure_key(asked, None), setup_id, lambda before: _figure(setup_id, asked, None, before)
    )
    updated_in_setup(
        _options_key(metric_id), setup_id, lambda before: _options_of(setup_id, before[0])
    )
    updated_in_setup(
        _finished_key("api-json", api_key(metric_id)),
        setup_id,
        lambda before: api_updated(setup_id, before),
    )


# --- the pickers' choices -------------------------------------------------------------------


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


def _setup_metrics(setup_id: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The setup as the pickers list it and its metrics, in one query; a 400 when it has
    no runs. Read inside answers cached per setup version themselves."""
    setup, metrics = cq.setup_metrics(setup_id=setup_id)
    if setup is None:
        raise BadParam("setup", f"no setup {setup_id} with runs")
    return setup, metrics
