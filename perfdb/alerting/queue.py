"""Alerting work, queued by task name: services call these and never import ``tasks``.

The names are the contract with the workers and with beat (``CELERY_BEAT_SCHEDULE`` in
config/settings.py). They keep the module path these tasks had before alerting became a
package, so a message queued before a deploy still finds its task after it.
"""

from __future__ import annotations

from collections.abc import Iterable

from celery import current_app

REGRESSIONS_CHECK = "perfdb.tasks.regressions_check"
NOTIFY_UPLOAD = "perfdb.tasks.notify_upload"
SEND_EMAIL = "perfdb.tasks.send_email"
SEND_DUE_EMAILS = "perfdb.tasks.send_due_emails"
SEND_DIGESTS = "perfdb.tasks.send_digests"
RECOVER_FOLLOWUPS = "perfdb.tasks.recover_followups"


def regressions_check(*, upload_id: int, series: Iterable[tuple[int, int]]) -> None:
    """Queue detection over the (setup, metric) series an upload touched; none, nothing."""
    pairs = [list(s) for s in series]
    if pairs:
        current_app.send_task(REGRESSIONS_CHECK, args=[upload_id, pairs])


def notify_upload(*, upload_id: int) -> None:
    """Queue the email about an upload's new alerts."""
    current_app.send_task(NOTIFY_UPLOAD, args=[upload_id])
