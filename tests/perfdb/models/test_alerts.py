"""``Alert.state_note``: what a detector state means and what will change it, in the words
the alert page, the compare table and the API show; nothing for a confirmed alert. Its
short form ``state_short`` is what a list row shows."""

from __future__ import annotations

import pytest
from django.utils import timezone

from perfdb.models import Alert
from tests.factories import AlertFactory

pytestmark = pytest.mark.django_db


def test_a_confirmed_alert_has_nothing_to_explain():
    alert = AlertFactory(confirmed_at=timezone.now())
    assert alert.state_note == "" and alert.state_short == ""
    assert AlertFactory(status=Alert.Status.ACKNOWLEDGED).state_note == ""


def test_an_untested_pending_alert_says_what_would_test_it():
    alert = AlertFactory(status=Alert.Status.PENDING, method="threshold", p_value=None)
    assert alert.state_note.startswith("pending: one value a side")
    assert "run at least 3 trials on each side" in alert.state_note
    assert alert.state_short == "one value a side: run 3 trials a side to test it"


def test_a_tested_pending_alert_says_what_confirms_or_clears_it():
    alert = AlertFactory(status=Alert.Status.PENDING, method="t-test", p_value=0.0018)
    note = alert.state_note
    assert note.startswith("pending: a move not yet significant")
    assert "the kernels after it confirm it" in note and "not emailed" in note
    assert alert.state_short == "the kernels after it confirm or clear it"


def test_a_cleared_alert_says_it_was_never_emailed():
    alert = AlertFactory(status=Alert.Status.CLEARED, method="t-test")
    assert alert.state_note.startswith("cleared: the next kernel came back")
    assert alert.state_note.endswith("never emailed")
    assert alert.state_short == "cleared: it came back"
