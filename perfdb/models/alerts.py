"""Regression alerts, what they are measured against, and the email about them."""

from __future__ import annotations

from django.conf import settings
from django.db import models

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
    """Staff-set single-value threshold (% change) per workload and metric."""

    workload = models.ForeignKey(Workload, on_delete=models.CASCADE)
    metric = models.ForeignKey(Metric, on_delete=models.CASCADE)
    threshold_pct = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workload", "metric"], name="threshold_uniq")
        ]

    def __str__(self) -> str:
        return f"{self.workload_id}/{self.metric_id}: {self.threshold_pct} %"


class Alert(models.Model):
    class Status(models.TextChoices):
        UNTRIAGED = "untriaged"
        ACKNOWLEDGED = "acknowledged"
        INVESTIGATING = "investigating"
        INVALID = "invalid"
        FIXED = "fixed"
        WONTFIX = "wontfix"
        IMPROVEMENT = "improvement"

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
    notified_at = models.DateTimeField(null=True, blank=True)

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
