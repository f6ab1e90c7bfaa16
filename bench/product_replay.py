"""A bench series replayed through the product itself: bundles, ingest, the regression check
and the alerts it stores in PostgreSQL, one kernel per upload.

The accuracy bench (bench/detector_accuracy.py) replays its series through the detector's
own calls and keeps the alerts by the service's rules in memory (``detector_suite.AlertBook``);
this module sends the same series through what a lab uses: a bundle per kernel (a manifest
with the trials given directly), ``upload_ingest``, ``regressions_check_upload``, the
``Alert`` rows. The two must end with the same alerts, or the bench's figures say nothing
about the product. With ``--lab`` the series' sibling setups (``detector_suite.sibling_levels``,
the same workload and metric on other hardware) are uploaded first, whole, so the prior the
product pools from them is the one the bench hands the detector.

Used by bench/situations_agreement.py (figures over a held-out seed) and by
tests/perfdb/alerting/test_bench_agreement.py (a sample of series, asserted equal). Needs
Django set up against a database the caller may write to.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TypeVar

from _common import stored_upload
from detector_suite import AlertBook, Series, service_check

from perfdb.detector import Change, Point, Settings

AlertKey = TypeVar("AlertKey", tuple[int, str], tuple[int, str, bool])
Held = tuple[int, str, bool]  # (kernel index, direction, confirmed)
RELEASE_EVERY = 4  # "backfill": every 4th kernel first, then the kernels between them
PLANS = ("in-order", "batches", "backfill", "bisect", "whole")
OWN_HARDWARE = "replay-own"  # the replayed series' setup; its siblings' are replay-sibling-N


@dataclass(frozen=True)
class Names:
    """Where one series lives in the product: its own workload, metric and hardware, so that
    series replayed into one database never share a setup or a metric."""

    workload: str
    metric: str

    @classmethod
    def of(cls, tag: str) -> Names:
        return cls(workload=f"replay-{tag}", metric=f"m_{tag}")


def arrival(n: int, plan: str) -> list[list[int]]:
    """The kernels (indices in kernel order) each upload brings. ``in-order``: one kernel per
    upload, in kernel order (the accuracy bench's replay); ``batches``: the next
    ``RELEASE_EVERY`` kernels per upload, in kernel order (a lab uploading a week's kernels
    together); ``backfill``: every ``RELEASE_EVERY``-th kernel first, one per upload, then
    the kernels between each two of them, one upload per gap, oldest first (a lab testing
    releases, then the release candidates between two of them together); ``bisect``: the
    same releases, then each gap's kernels one per upload, middle first, as a bisection
    picks them; ``whole``: every kernel in one upload."""
    if plan == "whole":
        return [list(range(n))]
    if plan == "in-order":
        return [[i] for i in range(n)]
    if plan == "batches":
        return [list(range(i, min(i + RELEASE_EVERY, n))) for i in range(0, n, RELEASE_EVERY)]
    if plan not in PLANS:
        raise ValueError(f"arrival plan {plan!r}: one of {', '.join(PLANS)}")
    releases = list(range(0, n, RELEASE_EVERY))
    gaps = [list(range(r + 1, min(r + RELEASE_EVERY, n))) for r in releases]
    if plan == "bisect":
        return [[r] for r in releases] + [[i] for gap in gaps for i in _halving(gap)]
    return [[r] for r in releases] + [gap for gap in gaps if gap]


def _halving(kernels: list[int]) -> list[int]:
    """A bisection's order: the middle kernel, then the middles of the two halves, ..."""
    if not kernels:
        return []
    middle = len(kernels) // 2
    rest = [_halving(kernels[:middle]), _halving(kernels[middle + 1 :])]
    return [kernels[middle], *(i for half in rest for i in half)]


@dataclass(frozen=True)
class BenchReplay:
    held: list[Held]  # every alert kept: (kernel index, direction, confirmed), sorted
    moved: int  # alerts re-attributed on the way


def manifest(names: Names, better: str, hardware: str, points: Sequence[Point]) -> str:
    """A bundle manifest: one stock run per point, its trials given directly."""
    head = [
        "format = 1",
        f'[hardware."{hardware}"]',
        "cpus = 2",
        f"[metric.{names.metric}]",
        'unit = "ops/s"',
        f'better = "{better}"',
    ]
    runs = [
        "\n".join(
            [
                "[[run]]",
                f'workload = "{names.workload}"',
                'workload_version = "1"',
                f'kernel = "{point.kernel}"',
                "patches = []",
                f'hardware = "{hardware}"',
                'mode = "UP"',
                f"metrics = {{ {names.metric} = [{', '.join(map(repr, point.values))}] }}",
            ]
        )
        for point in points
    ]
    return "\n".join(head) + "\n\n" + "\n\n".join(runs) + "\n"


def ingest(text: str, name: str) -> int:
    """Store a bundle of this manifest as an upload and ingest it here, as the ingest worker
    would (no broker: the caller checks it); returns the upload's id."""
    from ingest.services import upload_ingest

    upload = stored_upload(text, name)
    upload_ingest(upload_id=upload.pk)
    upload.refresh_from_db()
    if upload.status != "done":
        raise RuntimeError(f"{name}: upload {upload.pk} {upload.status}: {upload.error}")
    return upload.pk


def check(upload_id: int) -> None:
    """The regression check the ingest owes this upload (the series it recorded on the
    upload's row), run here as the detection worker's task runs it."""
    from perfdb.alerting.regressions import detection_run
    from perfdb.models import Upload

    owed = Upload.objects.values_list("detection_series", flat=True).get(pk=upload_id)
    detection_run(upload_id=upload_id, series=[(setup, metric) for setup, metric in owed or []])


def replay(
    series: Series,
    tag: str,
    siblings: Sequence[Series] = (),
    committed: Callable[[], AbstractContextManager[object]] = nullcontext,
    plan: str = "in-order",
) -> list[Held]:
    """Upload the siblings whole, then the series as ``plan`` brings it (``arrival``), each
    upload checked; the series' alerts as they stand at the end. ``committed``: a context
    each upload's ingest runs in, whose end stands for the commit (a test's transaction
    never commits, so its on-commit work, the caches' new versions, must be run by the
    test)."""
    names = Names.of(tag)
    bundles = [
        (manifest(names, series.better, f"replay-sibling-{n}", s.points), f"{tag}-sibling-{n}")
        for n, s in enumerate(siblings, start=1)
    ]
    bundles += [
        (
            manifest(names, series.better, OWN_HARDWARE, [series.points[i] for i in batch]),
            f"{tag}-{batch[0]}",
        )
        for batch in arrival(len(series.points), plan)
    ]
    for text, name in bundles:
        with committed():
            upload_id = ingest(text, f"{name}.tar.gz")
        check(upload_id)
    return stored_alerts(names, series)


def stored_alerts(names: Names, series: Series) -> list[Held]:
    """The series' alerts in the database: (kernel index, direction, confirmed), sorted."""
    from perfdb.models import Alert

    index = {point.kernel: i for i, point in enumerate(series.points)}
    rows = Alert.objects.filter(
        metric__name=names.metric, setup__hardware__name=OWN_HARDWARE
    ).values_list("candidate_run__kernel__version", "direction", "confirmed_at")
    return sorted((index[kernel], direction, at is not None) for kernel, direction, at in rows)


AGREES, SAYS_WHY, SILENT = "agrees", "differs, says why", "differs silently"
READINGS = (AGREES, SAYS_WHY, SILENT)


def compare_page_readings(names: Names) -> Counter[str]:
    """What the compare page (``dashboards.page_data.compare.compare_data``, as the page and
    ``/api/compare/`` build it) says of the series' runs, against the alerts: for each
    confirmed alert its baseline runs against its run, and for each stock kernel the previous
    kernel's runs against its own. It agrees when it calls the change significant in the
    direction of a confirmed alert on the new runs, or not significant where there is none;
    otherwise its row must say why (``alert_note``). Counted per reading."""
    from dashboards.page_data.compare import compare_data
    from perfdb.kernels import kernel_sort_key
    from perfdb.models import Alert, Run

    alerts = Alert.objects.filter(
        metric__name=names.metric, setup__hardware__name=OWN_HARDWARE, confirmed_at__isnull=False
    ).prefetch_related("baseline_runs")
    confirmed = {a.candidate_run_id: a.direction for a in alerts}
    readings = [([r.pk for r in a.baseline_runs.all()], [a.candidate_run_id]) for a in alerts]
    runs: dict[str, list[int]] = {}
    for run_id, kernel in Run.objects.filter(
        setup__workload__name=names.workload, setup__hardware__name=OWN_HARDWARE
    ).values_list("pk", "kernel__version"):
        runs.setdefault(kernel, []).append(run_id)
    kernels = sorted(runs, key=kernel_sort_key)
    readings += [(runs[a], runs[b]) for a, b in zip(kernels, kernels[1:], strict=False)]
    counts: Counter[str] = Counter()
    for base, new in readings:
        lines, _ = compare_data(base, new)
        (line,) = [line for line in lines if line.metric == names.metric]
        page = _direction(line.significant, line.better)
        detector = next((confirmed[r] for r in new if r in confirmed), None)
        counts[AGREES if page == detector else (SAYS_WHY if line.alert_note else SILENT)] += 1
    return counts


def _direction(significant: bool, better: bool | None) -> str | None:
    if not significant or better is None:
        return None
    return "improvement" if better else "regression"


def differences(
    bench: Sequence[AlertKey], product: Sequence[AlertKey]
) -> tuple[list[AlertKey], list[AlertKey]]:
    """(only in the bench's, only in the product's), each sorted."""
    left, right = Counter(bench), Counter(product)
    return sorted((left - right).elements()), sorted((right - left).elements())


def in_bench(
    series: Series,
    prior: float | None,
    plan: str = "in-order",
    every_kernel: bool = False,
    short_kernels: int = Settings().short_kernels,
) -> BenchReplay:
    """The same replay as the accuracy bench makes it (``detector_accuracy.replay``): the
    detector's calls with this prior (``detector_suite.lab_prior`` with ``--lab``), the
    alerts kept by ``AlertBook``; the kernels arriving as ``plan`` brings them, numbered in
    the order they arrive, as the database numbers runs."""
    batches = arrival(len(series.points), plan)
    run_of = {i: number for number, i in enumerate((i for b in batches for i in b), start=1)}
    arriving = [[series.points[i]._replace(run_id=run_of[i]) for i in b] for b in batches]
    settings = Settings(prior_noise_pct=prior, short_kernels=short_kernels)
    book = book_replay(arriving, series.better, settings, every_kernel)
    index_of = {run: i for i, run in run_of.items()}
    held = sorted((index_of[a.run_id], a.direction, a.confirmed) for a in book.book)
    return BenchReplay(held, book.moved)


def book_replay(
    batches: Sequence[Sequence[Point]],
    better: str,
    settings: Settings,
    every_kernel: bool = False,
    seen: Callable[[list[Change]], object] = lambda changes: None,
) -> AlertBook:
    """Points arriving in these batches (each an upload, its runs numbered after the runs
    before), each checked as the service checks an upload and kept by ``AlertBook``;
    ``seen`` is shown every check's changes."""
    book = AlertBook(every_kernel)
    shown: list[Point] = []
    for batch in batches:
        shown += batch
        changes = service_check(shown, {p.run_id for p in batch}, better, settings)
        seen(changes)
        book.record(shown, changes)
    return book
