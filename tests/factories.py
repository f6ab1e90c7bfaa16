"""Builders of the core stored objects the tests need but do not ingest (a helper, not a
test module): one place to change when a model gains a required field."""

from __future__ import annotations

from perfdb.models import Alert


def make_alert(run, metric, status="untriaged", direction="regression", change_pct=-6.3):
    return Alert.objects.create(
        setup=run.setup,
        metric=metric,
        candidate_run=run,
        change_pct=change_pct,
        confidence=0.99,
        method="ttest",
        direction=direction,
        status=status,
    )
