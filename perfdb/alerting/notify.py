"""Email for new alerts, through an outbox: every message is a row before it is a send.

``outbox_fill_for_upload`` writes one OutboxMessage per matching immediate subscriber for
an upload's new regressions (unique on subscription + upload, so running it twice adds
nothing). ``outbox_send`` sends one message through Django's SMTP backend; failures are
recorded on the row and retried with backoff by the task, and ``outbox_due`` lets beat pick
up anything whose task was lost. Nothing is dropped while the SMTP server is down: a
message is given up only after MAX_ATTEMPTS (about a day of retries) and stays visible.
"""

from __future__ import annotations

import fnmatch
import logging
import smtplib
from datetime import date, timedelta

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from perfdb.headers import header_text
from perfdb.models import Alert, OutboxMessage, Subscription

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 30
TRANSIENT_SEND_ERRORS = (smtplib.SMTPException, OSError)


def retry_delay(attempts: int) -> timedelta:
    """30 s, 1 min, 2 min … capped at 1 h: an hour-long SMTP outage costs a few tries."""
    return timedelta(seconds=min(30 * 2 ** max(attempts - 1, 0), 3600))


def subscription_matches(sub: Subscription, alert: Alert) -> bool:
    return (
        fnmatch.fnmatchcase(alert.setup.workload.name, sub.workload_pattern or "*")
        and fnmatch.fnmatchcase(alert.setup.hardware.name, sub.hardware_pattern or "*")
        and fnmatch.fnmatchcase(alert.metric.name, sub.metric_pattern or "*")
        and abs(alert.change_pct) >= sub.min_change_pct
    )


def _alert_rows(alerts: list[Alert]) -> list[dict[str, object]]:
    site = settings.SITE_URL
    rows = []
    for alert in alerts:
        baselines = list(alert.baseline_runs.all())
        base_ids = ",".join(str(r.pk) for r in baselines)
        rows.append(
            {
                "alert": alert,
                "workload": str(alert.setup.workload),
                "hardware": alert.setup.hardware.name,
                "mode": alert.setup.mode,
                "metric": f"{alert.metric.name} ({alert.metric.unit})",
                "kernel": alert.candidate_run.kernel.version,
                "patches": alert.candidate_run.patch_set.name or "stock",
                "baseline": ", ".join(r.build for r in baselines),
                "confidence": "single value"
                if alert.p_value is None
                else f"p = {alert.p_value:.3g}",
                "alert_url": site + reverse("alert-detail", args=[alert.pk]),
                "compare_url": f"{site}/compare/?base={base_ids}&new={alert.candidate_run_id}",
            }
        )
    return rows


def _render(alerts: list[Alert], *, heading: str) -> tuple[str, str, str]:
    rows = _alert_rows(alerts)
    worst = min(
        alerts, key=lambda a: a.change_pct if a.metric.better == "higher" else -a.change_pct
    )
    # Names come from uploaded bundles: a CR/LF would make the send fail (BadHeaderError).
    subject = header_text(
        f"[perfdb] {len(alerts)} regression{'s' if len(alerts) > 1 else ''}: "
        f"{worst.setup.workload.name} {worst.candidate_run.kernel.version} "
        f"{worst.change_pct:+.1f}% {worst.metric.name}",
        300,
    )
    context = {"rows": rows, "heading": heading, "site": settings.SITE_URL}
    text = render_to_string("email/alerts.txt", context)
    html = render_to_string("email/alerts.html", context)
    return subject, text, html


def _alerts_query():
    return Alert.objects.select_related(
        "setup__workload",
        "setup__hardware",
        "metric",
        "candidate_run__kernel",
        "candidate_run__patch_set",
    ).prefetch_related("baseline_runs__kernel", "baseline_runs__patch_set")


def _outbox_fill(
    alerts: list[Alert], *, delivery: str, heading: str, key: dict[str, object]
) -> list[int]:
    """One message per matching subscriber; ``key`` (upload or digest day) makes it unique,
    so running this twice adds nothing."""
    created = []
    for sub in Subscription.objects.filter(active=True, delivery=delivery):
        mine = [a for a in alerts if subscription_matches(sub, a)]
        if not mine:
            continue
        subject, text, html = _render(mine, heading=heading)
        try:
            with transaction.atomic():
                message = OutboxMessage.objects.create(
                    subscription=sub,
                    to=sub.email,
                    subject=subject,
                    text=text,
                    html=html,
                    next_attempt_at=timezone.now(),
                    **key,
                )
                message.alerts.set(mine)
        except IntegrityError:  # already made by an earlier run
            continue
        created.append(message.pk)
    return created


def outbox_fill_for_upload(*, upload_id: int) -> list[int]:
    """One message per matching immediate subscriber for the upload's new regressions."""
    alerts = list(_alerts_query().filter(upload_id=upload_id, direction=Alert.Direction.REGRESSION))
    if not alerts:
        return []
    created = _outbox_fill(
        alerts,
        delivery=Subscription.Delivery.IMMEDIATE,
        heading=f"New regressions from upload {upload_id}",
        key={"upload_id": upload_id},
    )
    Alert.objects.filter(pk__in=[a.pk for a in alerts], notified_at__isnull=True).update(
        notified_at=timezone.now()
    )
    log.info("upload %s: %d alert emails queued", upload_id, len(created))
    return created


def outbox_fill_digests(*, day: date | None = None) -> list[int]:
    """One digest per digest subscriber with matching regressions created on ``day``."""
    day = day or (timezone.now() - timedelta(days=1)).date()
    alerts = list(
        _alerts_query().filter(created_at__date=day, direction=Alert.Direction.REGRESSION)
    )
    return _outbox_fill(
        alerts,
        delivery=Subscription.Delivery.DIGEST,
        heading=f"Regressions found on {day}",
        key={"digest_date": day},
    )


class SendFailed(Exception):
    """A transient failure; the task retries it later."""


def outbox_send(*, message_id: int) -> str:
    """Send one message; returns its status. Raises SendFailed when a retry is due.

    The row stays locked while the SMTP conversation runs, so two workers never send the
    same message; the failure is saved before SendFailed leaves the transaction.
    """
    retry_error = ""
    with transaction.atomic():
        message = OutboxMessage.objects.select_for_update().filter(pk=message_id).first()
        if message is None or message.status != OutboxMessage.Status.PENDING:
            return message.status if message else "missing"
        email = EmailMultiAlternatives(
            subject=header_text(message.subject),  # rows written before subjects were cleaned
            body=message.text,
            from_email=settings.DEFAULT_FROM_EMAIL,
            to=[message.to],
        )
        if message.html:
            email.attach_alternative(message.html, "text/html")
        message.attempts += 1
        try:
            email.send(fail_silently=False)
        except TRANSIENT_SEND_ERRORS as exc:
            message.last_error = f"{type(exc).__name__}: {exc}"[:2000]
            if message.attempts >= MAX_ATTEMPTS:
                message.status = OutboxMessage.Status.FAILED
            else:
                message.next_attempt_at = timezone.now() + retry_delay(message.attempts)
            message.save(update_fields=["attempts", "last_error", "status", "next_attempt_at"])
            log.warning(
                "email %s to %s failed (attempt %d): %s",
                message.pk,
                message.to,
                message.attempts,
                message.last_error,
            )
            retry_error = message.last_error if message.status == "pending" else ""
        else:
            message.status = OutboxMessage.Status.SENT
            message.sent_at = timezone.now()
            message.last_error = ""
            message.save(update_fields=["attempts", "status", "sent_at", "last_error"])
            log.info("email %s sent to %s", message.pk, message.to)
    if retry_error:
        raise SendFailed(retry_error)
    return message.status


def outbox_due(*, now=None) -> list[int]:
    """Pending messages whose next attempt is due (beat re-queues them: no lost task)."""
    now = now or timezone.now()
    return list(
        OutboxMessage.objects.filter(
            status=OutboxMessage.Status.PENDING, next_attempt_at__lte=now
        ).values_list("pk", flat=True)
    )
