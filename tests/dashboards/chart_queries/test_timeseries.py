"""vmstat series stored as columns and read back (thinned when long) for the activity chart
(dashboards/chart_queries/timeseries.py): runs come in the order asked with their columns
in procps' header order, in one query however many runs there are."""

import pytest

from dashboards.chart_queries import vmstat_runs
from ingest.services import upload_create, upload_ingest
from perfdb.models import Run, Sample
from tests.bundles import make_bundle, manifest_toml, volano_run
from tests.dashboards.chart_queries.query_counts import assert_query_counts, load_with_copies

pytestmark = pytest.mark.django_db

HEADER = "procs -----------memory---------- ---swap-- -----io---- --system-- ----cpu----\n"
COLUMNS = " r  b   swpd   free   buff  cache   si   so    bi    bo   in    cs us sy id wa\n"


def vmstat_text(rows: int) -> str:
    lines = [HEADER, COLUMNS]
    for i in range(rows):
        lines.append(
            f" {i % 7}  0      0 {1000 + i} 10 20 0 0 0 0 {100 + i} {5000 + i} 10 5 85 0\n"
        )
    return "".join(lines)


def ingest_vmstat(tmp_path, rows: int) -> int:
    manifest = manifest_toml(
        volano_run("2.5.59", files='{ path = "vmstat.txt", parser = "vmstat" }')
    )
    path = make_bundle(
        tmp_path / "v.tar.gz", {"manifest.toml": manifest, "vmstat.txt": vmstat_text(rows)}
    )
    with open(path, "rb") as f:
        upload, _ = upload_create(stream=f, filename="v.tar.gz")
    upload_ingest(upload_id=upload.pk)
    upload.refresh_from_db()
    assert upload.status == "done", upload.error
    return upload.run_ids[0]


def test_a_series_is_one_row_per_column(tmp_path):
    run_id = ingest_vmstat(tmp_path, 50)
    cs = Sample.objects.get(run_id=run_id, column="cs")
    assert cs.values == [5000.0 + i for i in range(50)]
    assert cs.first_is_since_boot and cs.indexes is None
    assert Sample.objects.filter(run_id=run_id).count() == 16


def test_short_series_are_charted_whole(tmp_path, django_assert_num_queries):
    run_id = ingest_vmstat(tmp_path, 50)
    with django_assert_num_queries(1):
        (full,) = vmstat_runs(run_ids=[run_id])
    assert len(full.rows) == 50 and full.stride == 1


def test_long_series_are_thinned_for_the_chart(tmp_path, monkeypatch):
    monkeypatch.setattr("ingest.copy_rows.PREVIEW_POINTS", 10)  # as if the log were huge
    run_id = ingest_vmstat(tmp_path, 50)
    cs = Sample.objects.get(run_id=run_id, column="cs")
    assert len(cs.values) == 50  # the data itself is kept whole
    assert cs.preview == cs.values[::5] and cs.preview_stride == 5
    (thin,) = vmstat_runs(run_ids=[run_id])
    assert thin.stride == 5 and len(thin.rows) == 10
    column = thin.columns.index("cs")
    assert [row[column] for row in thin.rows] == [5000.0 + i for i in range(0, 50, 5)]
    assert thin.first_is_since_boot  # row 0, the since-boot average, is still the first row


def test_overlaid_runs_share_the_chart_budget(tmp_path, monkeypatch):
    monkeypatch.setattr("dashboards.chart_queries.timeseries.PREVIEW_POINTS", 200)
    first = ingest_vmstat(tmp_path, 200)
    second = ingest_vmstat(tmp_path / "b", 150) if (tmp_path / "b").mkdir() is None else None
    runs = vmstat_runs(run_ids=[first, second])
    assert [len(r.rows) for r in runs] == [100, 75] and [r.stride for r in runs] == [2, 2]


@pytest.mark.parametrize("extra_copies", [0, 2])
def test_query_counts_do_not_grow_with_runs(tmp_path, extra_copies, django_assert_num_queries):
    """Loading more data must not add queries (no N+1)."""
    load_with_copies(tmp_path, extra_copies)
    runs = list(Run.objects.values_list("id", flat=True))
    calls = {"vmstat": (lambda: vmstat_runs(run_ids=runs), 1)}
    assert_query_counts(django_assert_num_queries, calls)


def test_vmstat_runs_keep_the_asked_order_and_header_order(data):
    a, b = data.run("2.5.25"), data.run("2.4.20")
    runs = vmstat_runs(run_ids=[a.pk, b.pk])
    assert [r.run.run_id for r in runs] == [a.pk, b.pk]
    assert runs[0].columns[:4] == ("r", "b", "in", "cs")  # procps groups: procs, system, …
    assert runs[0].first_is_since_boot and len(runs[0].rows) == 7
