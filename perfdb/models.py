"""The data model: the vocabulary of docs/DESIGN (kernel, patch set, hardware, workload,
metric, run, trial) and what hangs off a run (results, profiles, samples, histograms,
curves, raw files), plus uploads, alerts, subscriptions and the email outbox.

Natural keys carry unique constraints so that ingesting the same data twice is harmless.
The big tables (results, profile entries, samples) use BIGINT keys.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models

from perfdb.kernels import parse_kernel


class Better(models.TextChoices):
    HIGHER = "higher", "higher is better"
    LOWER = "lower", "lower is better"
    NONE = "none", "no direction"


class Mode(models.TextChoices):
    UP = "UP", "uniprocessor kernel"
    SMP = "SMP", "SMP kernel"


class Kernel(models.Model):
    """A kernel version; ``sort_key`` orders versions as kernel people read them."""

    version = models.CharField(max_length=64, unique=True)
    sort_key = ArrayField(models.IntegerField())

    class Meta:
        ordering = ["sort_key", "version"]
        indexes = [
            # Serves: ORDER BY kernel order for every across-kernels series.
            models.Index(fields=["sort_key", "version"], name="kernel_order_idx"),
        ]

    def __str__(self) -> str:
        return self.version

    def save(self, *args, **kwargs):
        version = parse_kernel(self.version)
        self.version = version.text
        self.sort_key = list(version.sort_key)
        super().save(*args, **kwargs)


class Patch(models.Model):
    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)

    def __str__(self) -> str:
        return self.name


class PatchSet(models.Model):
    """An ordered list of patches; ``name`` joins them with '+', '' is the stock kernel."""

    name = models.CharField(max_length=500, unique=True, blank=True)
    patches = models.ManyToManyField(Patch, through="PatchSetItem", related_name="patch_sets")

    def __str__(self) -> str:
        return self.name or "stock"

    @property
    def is_stock(self) -> bool:
        return self.name == ""


class PatchSetItem(models.Model):
    patch_set = models.ForeignKey(PatchSet, on_delete=models.CASCADE, related_name="items")
    patch = models.ForeignKey(Patch, on_delete=models.PROTECT)
    position = models.PositiveSmallIntegerField()

    class Meta:
        ordering = ["patch_set", "position"]
        constraints = [
            models.UniqueConstraint(fields=["patch_set", "position"], name="patchsetitem_pos_uniq"),
            models.UniqueConstraint(fields=["patch_set", "patch"], name="patchsetitem_patch_uniq"),
        ]

    def __str__(self) -> str:
        return f"{self.patch_set} #{self.position}: {self.patch}"


class Hardware(models.Model):
    """A named machine set-up: Configuration C of 002, the Netfinity 7000 M10 of 000, …"""

    name = models.CharField(max_length=100, unique=True)
    cpus = models.PositiveIntegerField(null=True, blank=True)
    cpu_model = models.CharField(max_length=200, blank=True)
    mhz = models.PositiveIntegerField(null=True, blank=True)
    l2_kb = models.PositiveIntegerField(null=True, blank=True)
    memory_mb = models.PositiveIntegerField(null=True, blank=True)
    tiers = ArrayField(models.CharField(max_length=50), default=list, blank=True)
    notes = models.TextField(blank=True)

    class Meta:
        verbose_name_plural = "hardware"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Workload(models.Model):
    name = models.CharField(max_length=100)
    version = models.CharField(max_length=50, blank=True)

    class Meta:
        ordering = ["name", "version"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="workload_name_version_uniq")
        ]

    def __str__(self) -> str:
        return f"{self.name} {self.version}".strip()


class Metric(models.Model):
    """A measured quantity. The same name may exist in two units (dbench's throughput in
    MB/s, VolanoMark's in msg/s): a metric is its name and its unit."""

    name = models.CharField(max_length=100)
    unit = models.CharField(max_length=50)
    better = models.CharField(max_length=6, choices=Better.choices)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name", "unit"]
        constraints = [models.UniqueConstraint(fields=["name", "unit"], name="metric_uniq")]

    def __str__(self) -> str:
        return f"{self.name} ({self.unit})"


def params_digest(params: dict) -> str:
    """A stable digest of run parameters, so equal parameter sets share one Setup row."""
    import json

    canonical = json.dumps(params, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class Setup(models.Model):
    """Workload + hardware + UP/SMP + parameters: runs sharing a Setup differ only in kernel
    and patch set, so (setup, metric) is a series — a chart line and a regression check."""

    workload = models.ForeignKey(Workload, on_delete=models.PROTECT)
    hardware = models.ForeignKey(Hardware, on_delete=models.PROTECT)
    mode = models.CharField(max_length=3, choices=Mode.choices)
    params = models.JSONField(default=dict, blank=True)
    params_digest = models.CharField(max_length=64)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workload", "hardware", "mode", "params_digest"], name="setup_natural_uniq"
            )
        ]

    def __str__(self) -> str:
        params = ", ".join(f"{k}={v}" for k, v in sorted(self.params.items()))
        return f"{self.workload} on {self.hardware} {self.mode}" + (
            f" ({params})" if params else ""
        )


class Upload(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        PROCESSING = "processing"
        DONE = "done"
        FAILED = "failed"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    file = models.FileField(upload_to="bundles/%Y/%m/")
    filename = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64, unique=True)
    size = models.BigIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True)
    warnings = models.JSONField(default=list, blank=True)
    files_total = models.PositiveIntegerField(default=0)
    files_done = models.PositiveIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    source = models.CharField(max_length=20, default="api")  # api | web | cli | demo
    # Runs this upload created or found already stored (identical data uploaded before).
    run_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # Serves: the stuck-upload sweep (status = processing AND started_at < now - limit).
            models.Index(fields=["status", "started_at"], name="upload_status_idx"),
        ]

    def __str__(self) -> str:
        return f"upload {self.pk} ({self.filename}, {self.status})"


class Run(models.Model):
    """One measured configuration: setup + kernel + patch set, with trials and raw files."""

    setup = models.ForeignKey(Setup, on_delete=models.PROTECT, related_name="runs")
    kernel = models.ForeignKey(Kernel, on_delete=models.PROTECT, related_name="runs")
    patch_set = models.ForeignKey(PatchSet, on_delete=models.PROTECT, related_name="runs")
    upload = models.ForeignKey(
        Upload, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    label = models.CharField(max_length=100, blank=True)
    # The run this one is measured against when its source says so (002's "Base1"); the
    # regression check then compares with it instead of the default baseline.
    baseline = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    notes = models.TextField(blank=True)
    discard_first_trial = models.BooleanField(default=False)
    # sha256 of the run's keys and data: the same run uploaded twice is stored once.
    fingerprint = models.CharField(max_length=64, unique=True)
    synthetic = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # Serves: runs of one series across kernels (setup = ? ORDER BY kernel).
            models.Index(fields=["setup", "kernel", "patch_set"], name="run_series_idx"),
            # Serves: newest runs first (ORDER BY created_at DESC, id DESC LIMIT n):
            # chart_queries.run_choices (compare and activity pickers), queries.runs_recent.
            models.Index(fields=["-created_at", "-id"], name="run_recent_idx"),
            # Serves: the newest run of each setup (setup = ? ORDER BY created_at DESC, id DESC
            # LIMIT 1): chart_queries.latest_runs_by_scope, the overview's latest-run grid.
            models.Index(fields=["setup", "-created_at", "-id"], name="run_setup_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"run {self.pk}: {self.setup.workload} {self.build}"

    @property
    def build(self) -> str:
        """Kernel plus patches as the papers write them: ``2.4.20+O(1)``, ``2.5.59``."""
        patches = f"+{self.patch_set.name}" if self.patch_set.name else ""
        return f"{self.kernel.version}{patches}"


class Trial(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="trials")
    number = models.PositiveSmallIntegerField()
    discarded = models.BooleanField(default=False)  # warm-up, left out of means and tests

    class Meta:
        ordering = ["run", "number"]
        constraints = [models.UniqueConstraint(fields=["run", "number"], name="trial_uniq")]

    def __str__(self) -> str:
        return f"run {self.run_id} trial {self.number}"


class Result(models.Model):
    """A scalar result; ``trial`` 0 is a run-level value (no per-trial breakdown).

    ``setup`` and ``metric`` repeat the run's keys so one series is one index range scan.
    """

    id = models.BigAutoField(primary_key=True)
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="results")
    setup = models.ForeignKey(Setup, on_delete=models.CASCADE, related_name="+")
    metric = models.ForeignKey(Metric, on_delete=models.PROTECT, related_name="results")
    trial = models.PositiveSmallIntegerField(default=0)
    discarded = models.BooleanField(default=False)
    value = models.FloatField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "metric", "trial"], name="result_uniq")
        ]
        indexes = [
            # Serves: one series across kernels (setup = ? AND metric = ?).
            models.Index(fields=["setup", "metric"], name="result_series_idx"),
            # "Everything about one run" is served by result_uniq (run, metric, trial).
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.metric_id} trial {self.trial} = {self.value}"


class ProfileEntry(models.Model):
    id = models.BigAutoField(primary_key=True)
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="profile")
    trial = models.PositiveSmallIntegerField(default=0)
    source = models.CharField(max_length=30, default="readprofile")
    function = models.CharField(max_length=200)
    ticks = models.FloatField()
    load = models.FloatField(null=True, blank=True)
    share_pct = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [
            # Also serves: a run's profile (run = ?), everything about one run.
            models.UniqueConstraint(
                fields=["run", "trial", "source", "function"], name="profile_uniq"
            )
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.function}: {self.ticks}"


class Sample(models.Model):
    """One column of a time series (vmstat's ``cs`` over a run), its values in row order.

    Stored as arrays, one row per column (see perfdb/timeseries.py for why).
    """

    id = models.BigAutoField(primary_key=True)
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="samples")
    trial = models.PositiveSmallIntegerField(default=0)
    source = models.CharField(max_length=30)
    column = models.CharField(max_length=60)
    values = ArrayField(models.FloatField())
    # Row numbers when they are not simply 0, 1, 2, … (a generic CSV series may skip).
    indexes = ArrayField(models.IntegerField(), null=True, blank=True)
    # vmstat's first row is the average since boot, not a sample of the run.
    first_is_since_boot = models.BooleanField(default=False)
    timestamps = ArrayField(models.CharField(max_length=40), default=list, blank=True)
    # Pre-thinned copy for charts (every preview_stride-th row, at most PREVIEW_POINTS), so a
    # page never reads a million values to draw two thousand.
    preview = ArrayField(models.FloatField(), default=list, blank=True)
    preview_timestamps = ArrayField(models.CharField(max_length=40), default=list, blank=True)
    preview_stride = models.PositiveIntegerField(default=1)

    class Meta:
        constraints = [
            # Also serves: a run's series for the system-activity page (run = ? AND source = ?).
            models.UniqueConstraint(
                fields=["run", "trial", "source", "column"], name="sample_column_uniq"
            )
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.source}.{self.column} ({len(self.values)} values)"


class Histogram(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="histograms")
    trial = models.PositiveSmallIntegerField(default=0)
    name = models.CharField(max_length=100)
    x_label = models.CharField(max_length=100)
    bins = models.JSONField()  # [[x, count], ...]

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "trial", "name"], name="histogram_uniq")
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.name}"


class Curve(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="curves")
    trial = models.PositiveSmallIntegerField(default=0)
    name = models.CharField(max_length=100)
    x_label = models.CharField(max_length=100)
    y_label = models.CharField(max_length=100)
    points = models.JSONField()  # [[x, y], ...]

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "trial", "name"], name="curve_uniq")]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.name}"


class RawFile(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="raw_files")
    path = models.CharField(max_length=500)
    parser = models.CharField(max_length=50)
    trial = models.PositiveSmallIntegerField(default=0)
    content = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    warnings = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "path"], name="rawfile_uniq")]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.path}"


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
        SENT = "sent"
        FAILED = "failed"  # gave up after the maximum attempts; visible to staff

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
