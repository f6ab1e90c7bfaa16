"""Email for new alerts, through an outbox: every message is a row before it is a send.

``outbox_fill_for_upload`` writes one OutboxMessage per matching immediate subscriber for
an upload's new regressions (unique on subscription + upload; an alert is listed in one
message per subscriber, so running it twice adds nothing). A regression confirmed with the
upload after its message was made joins that message while it is pending, else goes in a
message of its own: an alert is marked notified only once a message lists it.
``outbox_send`` sends one message through Django's SMTP backend:

1. claim: one short transaction (``SELECT … FOR UPDATE SKIP LOCKED``) marks the row
   ``sending`` with ``claimed_at`` and gives it its Message-ID once (``make_msgid``), commit;
2. talk to SMTP outside any transaction or lock;
3. record the result: ``sent``; ``pending`` with the error and the next attempt (transient
   SMTP/network errors, backoff capped at OUTBOX_RETRY_MAX_SECONDS); or ``failed`` with the
   reason (a message that cannot be built or that the server refuses for good).

A sender that dies between 1 and 3 leaves the row ``sending``; ``outbox_release_stale``
puts it back to pending past OUTBOX_SENDING_TIMEOUT, marked ``possible_resend``, and the
resend carries the same Message-ID, so a copy the server had already accepted is recognisable
as the same message. Beat (``outbox_due``) re-queues due messages, so no countdown outlives
a broker visibility timeout, and a successful send wakes the others (``outbox_wake``): pending
mail goes out within a minute of the SMTP server answering again. A message is given up only
after OUTBOX_GIVE_UP_HOURS of failures, and stays visible to staff with its last error.
"""

from __future__ import annotations

import fnmatch
import logging
import smtplib
from datetime import date, datetime, timedelta
from email.utils import make_msgid

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from perfdb.alerting.email_render import render, render_fallback
from perfdb.features.reference import emailable
from perfdb.models import Alert, OutboxMessage, Subscription
from perfdb.operations.headers import header_text

log = logging.getLogger(__name__)

TRANSIENT_SEND_ERRORS = (smtplib.SMTPException, OSError)


def retry_delay(attempts: int) -> timedelta:
    """15 s, 30 s, then every OUTBOX_RETRY_MAX_SECONDS (45): after an outage the next try is
    never more than that away, and beat's 15-second sweep sends it."""
    cap = settings.OUTBOX_RETRY_MAX_SECONDS
    return timedelta(seconds=min(15 * 2 ** max(attempts - 1, 0), cap))


def _permanent(exc: BaseException) -> bool:
    """An SMTP answer that retrying cannot change (every recipient refused, a 5xx reply to
    the message); connection trouble and 4xx replies are transient."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        return True
    if isinstance(exc, smtplib.SMTPConnectError):
        return False
    code = getattr(exc, "smtp_code", 0)
    return isinstance(exc, smtplib.SMTPResponseException) and isinstance(code, int) and code >= 500


def subscription_matches(sub: Subscription, alert: Alert) -> bool:
    return (
        fnmatch.fnmatchcase(alert.setup.workload.name, sub.workload_pattern or "*")
        and fnmatch.fnmatchcase(alert.setup.hardware.name, sub.hardware_pattern or "*")
        and fnmatch.fnmatchcase(alert.metric.name, sub.metric_pattern or "*")
        and abs(alert.change_pct) >= sub.min_change_pct
    )


def _detailed(alerts: QuerySet[Alert]) -> QuerySet[Alert]:
    """The alerts with what an email shows of them, read in a few queries."""
    return alerts.select_related(
        "setup__workload",
        "setup__hardware",
        "metric",
        "candidate_run__kernel",
        "candidate_run__patch_set",
        "candidate_run__upload",  # the culprit build's upload: the body is grouped by build
        "runner_up_run__kernel",
    ).prefetch_related("baseline_runs__kernel", "baseline_runs__patch_set")


def emailable_alerts() -> QuerySet[Alert]:
    # Alerts shared with a reference build that moved too wait for triage
    # (perfdb/features/reference.py).
    return _detailed(emailable(Alert.objects.all()))


def alerts_owing_email() -> QuerySet[Alert]:
    """Regressions that still owe their immediate email (``notified_at`` decides)."""
    return Alert.objects.filter(
        notified_at__isnull=True,
        direction=Alert.Direction.REGRESSION,
        notify_upload_id__isnull=False,
    )


def _rendered(alerts: list[Alert], *, heading: str, to: str) -> tuple[str, str, str, str]:
    """(subject, text, html, problem): the templates' email, or the plain fallback and why."""
    try:
        return (*render(alerts, heading=heading), "")
    except Exception as exc:  # a template or data bug must not silence the alerts
        log.exception("email for %s: could not render; sending a plain fallback", to)
        problem = f"the email template failed ({type(exc).__name__}: {exc}); sent a plain "
        problem += "fallback listing the alerts"
        return (*render_fallback(alerts, heading=heading), problem)


def _message(sub: Subscription, alerts: list[Alert], heading: str, key: dict[str, object]) -> int:
    subject, text, html, problem = _rendered(alerts, heading=heading, to=sub.email)
    message = OutboxMessage.objects.create(
        subscription=sub,
        to=sub.email,
        subject=subject,
        text=text,
        html=html,
        next_attempt_at=timezone.now(),
        last_error=problem[:2000],
        **key,
    )
    message.alerts.set(alerts)
    return message.pk


def _extend(message: OutboxMessage, owed: list[Alert], heading: str) -> int:
    """Add alerts to a message not sent yet (its row locked): still one email."""
    listed = message.alerts.values_list("pk", flat=True)
    alerts = [*_detailed(Alert.objects.filter(pk__in=listed)), *owed]
    message.subject, message.text, message.html, problem = _rendered(
        alerts, heading=heading, to=message.to
    )
    message.last_error = problem[:2000] or message.last_error
    message.save(update_fields=["subject", "text", "html", "last_error"])
    message.alerts.add(*owed)
    return message.pk


def _fill_for(
    sub: Subscription, mine: list[Alert], *, heading: str, key: dict[str, object]
) -> list[int]:
    """The subscriber's message for ``key`` with ``mine``; alerts it already has, or any
    other message of the subscriber has, are not listed again."""
    with transaction.atomic():
        found = OutboxMessage.objects.select_for_update().filter(subscription=sub, **key)
        message = found.first()
        if message is None:
            try:
                with transaction.atomic():
                    return [_message(sub, mine, heading, key)]
            except IntegrityError:  # a concurrent fill made it: see what it listed
                message = found.get()
        emailed = OutboxMessage.alerts.through.objects.filter(
            outboxmessage__subscription=sub, alert_id__in=[a.pk for a in mine]
        ).values_list("alert_id", flat=True)
        owed = [a for a in mine if a.pk not in set(emailed)]
        if not owed:
            return []
        if message.status == OutboxMessage.Status.PENDING and not message.possible_resend:
            return [_extend(message, owed, heading)]
        # already sending, sent or failed: these alerts were confirmed after it was made
        later = f"{heading} (confirmed after the first email about it)"
        return [_message(sub, owed, later, {})]


def _outbox_fill(
    alerts: list[Alert], *, delivery: str, heading: str, key: dict[str, object]
) -> list[int]:
    """One message per matching subscriber and ``key`` (upload or digest day), each alert in
    one message per subscriber, so running this twice adds nothing. An alert that reaches
    a key after its message was made (an upload's check commits a series at a time, and a
    check killed half-way is run again) joins that message while it is pending, else goes
    in a message of its own: never marked emailed without being in one."""
    made: list[int] = []
    for sub in Subscription.objects.filter(active=True, delivery=delivery):
        mine = [a for a in alerts if subscription_matches(sub, a)]
        if mine:
            made += _fill_for(sub, mine, heading=heading, key=key)
    return made


def outbox_fill_for_upload(*, upload_id: int) -> list[int]:
    """One message per matching immediate subscriber for the upload's new regressions.

    An alert is emailed with ``notify_upload``: the upload whose check confirmed it, which for
    a step confirmed by the next kernel is not the upload of its run. Pending (unconfirmed)
    and cleared alerts have none, so they are never emailed.
    """
    alerts = list(
        emailable_alerts().filter(notify_upload_id=upload_id, direction=Alert.Direction.REGRESSION)
    )
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
    """One digest per digest subscriber with matching regressions confirmed on ``day``."""
    day = day or (timezone.now() - timedelta(days=1)).date()
    alerts = list(
        emailable_alerts()
        .filter(confirmed_at__date=day, direction=Alert.Direction.REGRESSION)
        .exclude(status__in=[Alert.Status.PENDING, Alert.Status.CLEARED])
    )
    return _outbox_fill(
        alerts,
        delivery=Subscription.Delivery.DIGEST,
        heading=f"Regressions found on {day}",
        key={"digest_date": day},
    )


class SendFailed(Exception):
    """A transient failure; the message stays pending and beat sends it when due."""


def _msgid_domain() -> str:
    domain = settings.DEFAULT_FROM_EMAIL.rpartition("@")[2].strip("> ")
    return header_text(domain, 200) or "perfdb"


def outbox_claim(*, message_id: int, now: datetime | None = None) -> OutboxMessage | None:
    """Mark a pending message ``sending`` in one short transaction; None when it is not
    pending or another sender holds its row."""
    now = now or timezone.now()
    with transaction.atomic():
        message = (
            OutboxMessage.objects.select_for_update(skip_locked=True)
            .filter(pk=message_id, status=OutboxMessage.Status.PENDING)
            .first()
        )
        if message is None:
            return None
        message.status = OutboxMessage.Status.SENDING
        message.claimed_at = now
        message.attempts += 1
        if not message.message_id:
            message.message_id = make_msgid(domain=_msgid_domain())
        message.save(update_fields=["status", "claimed_at", "attempts", "message_id"])
    return message


def _build(message: OutboxMessage) -> EmailMultiAlternatives:
    email = EmailMultiAlternatives(
        subject=header_text(message.subject),  # rows written before subjects were cleaned
        body=message.text,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[message.to],
        headers={"Message-ID": message.message_id},
    )
    if message.html:
        email.attach_alternative(message.html, "text/html")
    email.message()  # builds the headers now: a bad one fails here, recorded, never sent
    return email


def _record(message: OutboxMessage, **fields: object) -> None:
    """Save the outcome of this claim (only if the row is still this claim's)."""
    OutboxMessage.objects.filter(pk=message.pk).exclude(status=OutboxMessage.Status.SENT).update(
        **fields
    )


def outbox_send(*, message_id: int) -> str:
    """Send one message; returns its status. Raises SendFailed when a retry is due."""
    message = outbox_claim(message_id=message_id)
    if message is None:
        status = OutboxMessage.objects.filter(pk=message_id).values_list("status", flat=True)
        return status.first() or "missing"
    try:
        email = _build(message)
    except Exception as exc:  # BadHeaderError, an address that is no address, …
        reason = f"could not build the message: {type(exc).__name__}: {exc}"[:2000]
        _record(message, status=OutboxMessage.Status.FAILED, last_error=reason)
        log.error("email %s to %r failed for good: %s", message.pk, message.to, reason)
        return OutboxMessage.Status.FAILED
    try:
        email.send(fail_silently=False)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"[:2000]
        age = timezone.now() - message.created_at
        give_up = age > timedelta(hours=settings.OUTBOX_GIVE_UP_HOURS)
        if not isinstance(exc, TRANSIENT_SEND_ERRORS) or _permanent(exc) or give_up:
            reason = f"gave up after {message.attempts} attempts: {error}" if give_up else error
            _record(message, status=OutboxMessage.Status.FAILED, last_error=reason[:2000])
            log.error("email %s to %r failed for good: %s", message.pk, message.to, reason)
            return OutboxMessage.Status.FAILED
        _record(
            message,
            status=OutboxMessage.Status.PENDING,
            last_error=error,
            next_attempt_at=timezone.now() + retry_delay(message.attempts),
        )
        log.warning(
            "email %s to %r failed (attempt %d): %s",
            message.pk,
            message.to,
            message.attempts,
            error,
        )
        raise SendFailed(error) from exc
    _record(message, status=OutboxMessage.Status.SENT, sent_at=timezone.now(), last_error="")
    log.info("email %s sent to %r (%s)", message.pk, message.to, message.message_id)
    return OutboxMessage.Status.SENT


def outbox_release_stale(*, now: datetime | None = None) -> list[int]:
    """Messages left ``sending`` by a sender that died go back to pending, marked as a
    possible resend (the server may have accepted the earlier copy; same Message-ID)."""
    now = now or timezone.now()
    limit = now - timedelta(seconds=settings.OUTBOX_SENDING_TIMEOUT)
    stale = list(
        OutboxMessage.objects.filter(
            status=OutboxMessage.Status.SENDING, claimed_at__lt=limit
        ).values_list("pk", flat=True)
    )
    if stale:
        OutboxMessage.objects.filter(pk__in=stale, status=OutboxMessage.Status.SENDING).update(
            status=OutboxMessage.Status.PENDING, possible_resend=True, next_attempt_at=now
        )
        log.warning("emails %s were left sending by a dead sender; pending again", stale)
    return stale


def outbox_due(*, now: datetime | None = None) -> list[int]:
    """Pending messages whose next attempt is due (beat re-queues them: no lost task). Each
    is leased for OUTBOX_RETRY_MAX_SECONDS so the next sweep does not queue it again while
    its task waits in the queue."""
    now = now or timezone.now()
    due = list(
        OutboxMessage.objects.filter(
            status=OutboxMessage.Status.PENDING, next_attempt_at__lte=now
        ).values_list("pk", flat=True)[:500]
    )
    if due:
        lease = now + timedelta(seconds=settings.OUTBOX_RETRY_MAX_SECONDS)
        OutboxMessage.objects.filter(pk__in=due).update(next_attempt_at=lease)
    return due


def outbox_wake(*, now: datetime | None = None) -> list[int]:
    """After a successful send the server is back: every pending message is due now."""
    now = now or timezone.now()
    OutboxMessage.objects.filter(
        status=OutboxMessage.Status.PENDING, next_attempt_at__gt=now
    ).update(next_attempt_at=now)
    return outbox_due(now=now)
