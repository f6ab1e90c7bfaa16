"""Commits in a series (perfdb/alerting/kernel_order.py): ordered as the database stores them,
not by their hashes, wherever the detector reads a series."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.services import upload_create, upload_ingest
from perfdb.alerting.kernel_order import detector_names
from perfdb.alerting.regressions import regressions_check_upload
from perfdb.detector import kernel_name, kernel_order
from perfdb.kernels.commits import KernelFacts, kernels_state
from perfdb.models import Alert, Kernel, Result

pytestmark = pytest.mark.django_db

MAIL = (
    Path(__file__).resolve().parents[2]
    / "fixtures/formats/lkp/will-it-scale-poll2-2025-regression.txt"
)


def test_versions_are_named_as_they_are_without_a_query(django_assert_num_queries):
    with django_assert_num_queries(0):
        assert detector_names(["6.8.0-rc3", "2.4.20"]) == {
            "6.8.0-rc3": "6.8.0-rc3",
            "2.4.20": "2.4.20",
        }


def test_a_commit_carries_its_stored_order_past_its_hash():
    # "ffff…" sorts after "0000…" by hash; stated as based on it, it must come first
    kernels_state({"ffff00001111": KernelFacts(), "0000aaaa2222": KernelFacts(base="ffff00001111")})
    names = detector_names(["0000aaaa2222", "ffff00001111"])
    assert [kernel_name(n) for n in names.values()] == ["0000aaaa2222", "ffff00001111"]
    ordered = sorted(names.values(), key=kernel_order)
    assert [kernel_name(n) for n in ordered] == ["ffff00001111", "0000aaaa2222"]
    stored = Kernel.objects.get(version="0000aaaa2222").sort_key
    assert kernel_order(names["0000aaaa2222"])[0] == tuple(stored)


def test_a_robot_mail_alerts_the_tested_commit_not_its_base():
    """The tested commit 893598979838 sorts before its base d000e073ca2a by hash."""
    with open(MAIL, "rb") as stream:
        upload, _ = upload_create(stream=stream, filename=MAIL.name, source="cli")
    upload_ingest(upload_id=upload.pk)
    upload.refresh_from_db()
    assert upload.status == "done", upload.error
    series = set(Result.objects.filter(run__upload=upload).values_list("setup_id", "metric_id"))
    regressions_check_upload(upload_id=upload.pk, series=series, notify=False)
    alert = Alert.objects.get(metric__name="will-it-scale.per_process_ops")
    assert alert.candidate_run.kernel.version == "893598979838"
    assert alert.direction == "regression"
    assert alert.change_pct == pytest.approx((232411 - 263173) / 263173 * 100)
