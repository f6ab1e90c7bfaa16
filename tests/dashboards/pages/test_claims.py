"""Claims: the 002 SJAS demo bundle states the paper's text; its contradictions with the
tables show up as contradicted, with both numbers, on /claims/ and /api/claims/."""

from __future__ import annotations

import csv
import io

import pytest

from ingest.demo import bundle_from_folder, demo_folders
from perfdb.models import Claim
from tests.dashboards.data import ingest

pytestmark = pytest.mark.django_db

# (candidate, hardware, text's figure, table's figure): 002's text against its tables.
CONTRADICTIONS = {
    ("2.5.66+trytowakeup1", "002-B"): (4.7, 4.3),
    ("2.5.66+busiestqueue", "002-B"): (-5.1, -4.3),
    ("2.5.66+trytowakeup1", "002-D"): (4.3, 4.4),
    ("2.5.66+trytowakeup2", "002-D"): (4.5, 3.0),
    ("2.5.66+busiestqueue", "002-D"): (2.4, 5.2),
    ("2.4.20+O(1)", "002-B"): (-10, -10.6),
}


@pytest.fixture
def sjas(tmp_path):
    folder = next(f for f in demo_folders() if f.name == "002-anand-2003-specjappserver")
    path = tmp_path / "sjas.tar.gz"
    path.write_bytes(bundle_from_folder(folder))
    return ingest(path)


def test_every_text_table_disagreement_is_contradicted(sjas):
    contradicted = {
        (c.candidate, c.setup_text.split(" on ")[1].split()[0]): c
        for c in Claim.objects.filter(verdict="contradicted")
    }
    assert set(contradicted) == set(CONTRADICTIONS)
    for key, (text, table) in CONTRADICTIONS.items():
        claim = contradicted[key]
        assert claim.stated_change_pct == text
        assert claim.computed_change_pct == pytest.approx(table)
    others = Claim.objects.exclude(verdict="contradicted")
    assert others.count() == 7 and {c.verdict for c in others} == {"not testable"}


def test_claims_page_lists_contradicted_first_with_both_numbers(client, sjas):
    page = client.get("/claims/").content.decode()
    first = page.index("claim-contradicted")
    assert first < page.index("claim-not-testable")
    assert "4.7 %" in page and "4.30 %" in page
    api = client.get("/api/claims/").json()["claims"]
    assert api[0]["verdict"] == "contradicted" and api[0]["compare"].startswith("/compare/?base=")
    assert client.get("/api/claims/?verdict=maybe").status_code == 400
    rows = list(csv.DictReader(io.StringIO(client.get("/claims/?format=csv").content.decode())))
    assert len(rows) == 13 and rows[0]["verdict"] == "contradicted"


def test_reingesting_keeps_one_claim_each(sjas, tmp_path):
    folder = next(f for f in demo_folders() if f.name == "002-anand-2003-specjappserver")
    assert Claim.objects.count() == 13
    path = tmp_path / "again.tar.gz"
    path.write_bytes(bundle_from_folder(folder))
    from ingest.services import upload_create

    with open(path, "rb") as stream:
        upload_create(stream=stream, filename="again.tar.gz", source="cli")
    assert Claim.objects.count() == 13


def _ingest_demo(tmp_path, name):
    folder = next(f for f in demo_folders() if f.name == name)
    path = tmp_path / f"{name}.tar.gz"
    path.write_bytes(bundle_from_folder(folder))
    return ingest(path)


@pytest.mark.parametrize(
    ("bundle", "metric", "stated", "computed"),
    [
        # "about 40 % (18740/13183)": the tables give +42.15 %, inside "about" (±2.5)
        ("001-hartner-2002-volanomark-pri-preempt", "throughput", 40, 18740 / 13183 * 100 - 100),
        # Table 3: 2906 -> 2990 conforming connections, "+2.9 %"
        ("001-hartner-2002-specweb99-pri-preempt", "conforming_connections", 2.9, 84 / 2906 * 100),
    ],
)
def test_seed_001_claims_agree_with_its_tables(tmp_path, bundle, metric, stated, computed):
    _ingest_demo(tmp_path, bundle)
    (claim,) = Claim.objects.filter(metric_name=metric)
    assert claim.stated_change_pct == stated
    assert claim.computed_change_pct == pytest.approx(computed)
    # one value per side: the numbers agree, but no interval can be drawn from them
    assert claim.verdict == "not testable"
