"""Regression alerts, what they are measured against, and the email about them."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from perfdb.detector.policy import validate_threshold_pct
from perfdb.models.checks import finite
from perfdb.models.runs import Run, Upload
from perfdb.models.vocabulary import Metric, Setup, Workload

# --- Regressions ------------------------------------------------------------------------


class PinnedBaseline(models.Model):
    """A baseline a user pins for a series ("Base1" in 002); overrides the default choice."""

    setup = models.ForeignKey(Setup, on_delete=models.CASCADE)
    metric = models.ForeignKey(Metric, on_delete=models.CASCADE)
    run = models.ForeignKey(Run, on_delete=models.CASCADE)
    pinned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["setup", "metric"], name="pinned_baseline_uniq")
        ]

    def __str__(self) -> str:
        return f"baseline run {self.run_id} for setup {self.setup_id} metric {self.metric_id}"


class Threshold(models.Model):
    """Staff-set detector settings per workload and metric: a fixed threshold (% change) that
    replaces the one derived from the noise, and/or the typical run-to-run noise (%) a short
    series is shrunk toward. Both must be finite and > 0 (``perfdb.detector.policy``)."""

    workload = models.ForeignKey(Workload, on_delete=models.CASCADE)
    metric = models.ForeignKey(Metric, on_delete=models.CASCADE)
    threshold_pct = models.FloatField(
        null=True, blank=True, help_text="fixed threshold, % change; empty = from the noise"
    )
    typical_noise_pct = models.FloatField(
        null=True,
        blank=True,
        help_text="typical sd of one kernel's result, %; the detector's prior for short series",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workload", "metric"], name="threshold_uniq"),
            # > 0 and finite in the database too (PostgreSQL sorts NaN above Infinity).
            *(
                models.CheckConstraint(
                    condition=finite(name, null=True, positive=True),
                    name=f"threshold_{name}_finite_positive",
                )
                for name in ("threshold_pct", "typical_noise_pct")
            ),
        ]

    def __str__(self) -> str:
        return f"{self.workload_id}/{self.metric_id}: {self.threshold_pct} %"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # Every write path (admin, API, shell, fixtures through save) is checked: a 0 or NaN
        # threshold would divide by zero or flag everything.
        validate_threshold_pct(self.threshold_pct)
        validate_threshold_pct(self.typical_noise_pct)
        super().save(*args, **kwargs)

    def clean(self) -> None:
        errors = {}
        for name in ("threshold_pct", "typical_noise_pct"):
            try:
                validate_threshold_pct(getattr(self, name))
            except ValueError as error:
                errors[name] = str(error)
        if errors:
            raise ValidationError(errors)


class Alert(models.Model):
    class Status(models.TextChoices):
        UNTRIAGED = "untriaged"
        ACKNOWLEDGED = "acknowledged"
        INVESTIGATING = "investigating"
        INVALID = "invalid"
        FIXED = "fixed"
        WONTFIX = "wontfix"
        IMPROVEMENT = "improvement"
        # Set by the detector, not by triage: the newest kernel moved and the next kernel
        # decides, or no test was possible (one value a side; docs/detector.md). Pending is
        # stored and shown, never emailed; cleared means the next kernel came back (a spike).
        PENDING = "pending"
        CLEARED = "cleared"

    class Direction(models.TextChoices):
        REGRESSION = "regression"
        IMPROVEMENT = "improvement"

    setup = models.ForeignKey(Setup, on_delete=models.CASCADE, related_name="alerts")
    metric = models.ForeignKey(Metric, on_delete=models.CASCADE, related_name="alerts")
    baseline_runs = models.ManyToManyField(Run, related_name="baseline_for_alerts")
    candidate_run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="alerts")
    upload = models.ForeignKey(
        Upload, null=True, blank=True, on_delete=models.SET_NULL, related_name="alerts"
    )
    change_pct = models.FloatField()
    p_value = models.FloatField(null=True, blank=True)
    confidence = models.FloatField()
    method = models.CharField(max_length=20)
    direction = models.CharField(max_length=12, choices=Direction.choices)
    status = models.CharField(max_length=14, choices=Status.choices, default=Status.UNTRIAGED)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="assigned_alerts",
    )
    notes = models.TextField(blank=True)
    recovered = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # When the detector confirmed the change (None: pending or cleared). A step confirmed by
    # a later kernel belongs to the earlier upload's run but is emailed with the upload that
    # confirmed it: ``notify_upload`` (set once, so it is emailed exactly once).
    confirmed_at = models.DateTimeField(null=True, blank=True)
    notify_upload = models.ForeignKey(
        Upload, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    notified_at = models.DateTimeField(null=True, blank=True)
    # A step's first kernel is uncertain when the step is small next to the noise: how likely
    # the candidate's kernel is (0..1), and the next likeliest first kernel's run and share
    # (perfdb/detector/placement.py). None for a pairwise change, whose kernel is the one compared.
    location_share = models.FloatField(null=True, blank=True)
    runner_up_run = models.ForeignKey(
        Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    runner_up_share = models.FloatField(null=True, blank=True)
    # The series' newest run (by id) when the detector last placed this alert (made,
    # confirmed or moved it). A kernel uploaded since that sorts between the alert's kernel
    # and a neighbour is in the gap the step was placed at: a step re-placed onto it moves
    # the alert instead of raising a second one (perfdb.alerting.moves_rule.KernelOrder). Empty (an
    # alert from before): every run counts as seen.
    placed_through_run_id = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # Re-ingesting or re-running detection never duplicates an alert.
            models.UniqueConstraint(
                fields=["setup", "metric", "candidate_run", "method"], name="alert_uniq"
            )
        ]
        indexes = [
            # Serves: the alerts page filtered by status, newest first.
            models.Index(fields=["status", "-created_at"], name="alert_status_idx"),
        ]

    def __str__(self) -> str:
        return f"alert {self.pk}: {self.direction} {self.change_pct:+.1f} % ({self.status})"

    @property
    def state_note(self) -> str:
        """What a detector state means and what will change it, in words ("" for a
        confirmed or triaged alert): a pending alert is shown and never emailed."""
        if self.status == self.Status.CLEARED:
            return (
                "cleared: the next kernel came back (a spike), or this was the way back from "
                "an excursion; never emailed"
            )
        if self.confirmed_at is not None or self.status not in (
            self.Status.PENDING,
            self.Status.IMPROVEMENT,
        ):
            return ""
        if self.method == "threshold":
            return (
                "pending: one value a side and nothing known of the noise; run at least 3 "
                "trials on each side (or set a threshold for the workload and metric) to "
                "test it; not emailed until then"
            )
        return (
            "pending: a move not yet significant (the newest kernel moved, or the kernels "
            "after it share the move on too few kernels); the kernels after it confirm it "
            "(they stay at the new level) or clear it (one comes back); not emailed until "
            "confirmed"
        )

    @property
    def state_short(self) -> str:
        """``state_note`` in a few words, for a list row that shows many alerts (the
        overview): the whole note is the row's tooltip and the alert's page."""
        note = self.state_note
        if not note:
            return ""
        if self.status == self.Status.CLEARED:
            return "cleared: it came back"
        if self.method == "threshold":
            return "one value a side: run 3 trials a side to test it"
        return "the kernels after it confirm or clear it"


class AlertEvent(models.Model):
    """History of every triage change and who made it."""

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="events")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    field = models.CharField(max_length=20)
    old = models.TextField(blank=True)
    new = models.TextField(blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"alert {self.alert_id} {self.field}: {self.old} -> {self.new}"


# --- Email --------------------------------------------------------------------------------


class Subscription(models.Model):
    class Delivery(models.TextChoices):
        IMMEDIATE = "immediate"
        DIGEST = "digest", "daily digest"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="subscriptions"
    )
    email = models.EmailField()
    # Shell-style patterns (fnmatch): "SPECjAppServer*", "*", "C".
    workload_pattern = models.CharField(max_length=100, default="*")
    hardware_pattern = models.CharField(max_length=100, default="*")
    metric_pattern = models.CharField(max_length=100, default="*")
    min_change_pct = models.FloatField(default=0)
    delivery = models.CharField(max_length=10, choices=Delivery.choices, default="immediate")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return (
            f"{self.email}: {self.workload_pattern}/{self.hardware_pattern}/{self.metric_pattern}"
        )


class OutboxMessage(models.Model):
    """Every email we mean to send, with its delivery state; nothing is dropped."""

    class Status(models.TextChoices):
        PENDING = "pending"
        SENDING = "sending"  # claimed by a sender (claimed_at); back to pending past a timeout
        SENT = "sent"
        FAILED = "failed"  # cannot be sent (reason in last_error) or given up; shown to staff

    subscription = models.ForeignKey(
        Subscription, null=True, on_delete=models.SET_NULL, related_name="messages"
    )
    upload = models.ForeignKey(Upload, null=True, blank=True, on_delete=models.SET_NULL)
    digest_date = models.DateField(null=True, blank=True)
    to = models.EmailField()
    subject = models.CharField(max_length=300)
    text = models.TextField()
    html = models.TextField(blank=True)
    alerts = models.ManyToManyField(Alert, related_name="messages")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    # The Message-ID of every send of this row: a resend after a crash is recognisable.
    message_id = models.CharField(max_length=255, blank=True)
    # A sender died after the SMTP exchange began: the server may hold an earlier copy.
    possible_resend = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            # One email per subscriber per upload (and per digest day).
            models.UniqueConstraint(fields=["subscription", "upload"], name="outbox_upload_uniq"),
            models.UniqueConstraint(
                fields=["subscription", "digest_date"], name="outbox_digest_uniq"
            ),
        ]
        indexes = [
            # Serves: the sender sweep (status = pending AND next_attempt_at <= now).
            models.Index(fields=["status", "next_attempt_at"], name="outbox_due_idx"),
        ]

    def __str__(self) -> str:
        return f"message {self.pk} to {self.to} ({self.status})"
