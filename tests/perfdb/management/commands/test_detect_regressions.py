"""``manage.py detect_regressions``: every series checked again, no alert made twice."""

import pytest
from django.core.management import call_command

from perfdb.models import Alert
from tests.perfdb.alerting.builds import ingest_runs

pytestmark = pytest.mark.django_db


def test_detect_regressions_rechecks_everything(tmp_path, capsys):
    ingest_runs(
        tmp_path,
        "a.tar.gz",
        [("2.4.20", "[]", (13000, 13100, 12950)), ("2.4.20", '["O(1)"]', (11000, 11100, 11050))],
    )
    assert not Alert.objects.exists()  # no check ran yet (no worker in this test)
    call_command("detect_regressions")
    assert Alert.objects.filter(metric__name="throughput", direction="regression").count() == 1
    call_command("detect_regressions")
    assert Alert.objects.filter(metric__name="throughput").count() == 1
    assert "0 new alert(s)" in capsys.readouterr().out
