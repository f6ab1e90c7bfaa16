"""Typed serializers of the API, so the OpenAPI schema states every field it answers."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import NotFound

from perfdb.alerting import moves, placement
from perfdb.detector.policy import validate_threshold_pct
from perfdb.models import (
    Alert,
    Better,
    Curve,
    Hardware,
    Histogram,
    Kernel,
    Metric,
    Mode,
    Patch,
    PatchSet,
    PinnedBaseline,
    ProfileEntry,
    RawFile,
    Sample,
    Setup,
    Subscription,
    Threshold,
    Trial,
    Upload,
    Workload,
)

# The choice sets, named once in the schema (SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]).
ALERT_STATUS = Alert.Status.choices
UPLOAD_STATUS = Upload.Status.values
BETTER = Better.choices
MODE = Mode.choices


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {
            "oneOf": [{"type": "number"}, {"type": "string"}, {"type": "boolean"}]
        },
    }
)
class ParamsField(serializers.JSONField):
    """A setup's parameters: name → number, string or boolean."""


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
    }
)
class PairsField(serializers.JSONField):
    """[[x, y], …] pairs (histogram bins, curve points)."""


class KernelSerializer(serializers.ModelSerializer):
    class Meta:
        model = Kernel
        fields = ["id", "version"]


class PatchSerializer(serializers.ModelSerializer):
    class Meta:
        model = Patch
        fields = ["id", "name", "description"]


class PatchSetSerializer(serializers.ModelSerializer):
    patches = serializers.SerializerMethodField(help_text="the patches in order; [] is stock")

    class Meta:
        model = PatchSet
        fields = ["id", "name", "patches"]

    def get_patches(self, obj: PatchSet) -> list[str]:
        return [p for p in obj.name.split("+") if p]


class HardwareSerializer(serializers.ModelSerializer):
    class Meta:
        model = Hardware
        fields = ["id", "name", "cpus", "cpu_model", "mhz", "l2_kb", "memory_mb", "tiers", "notes"]


class WorkloadSerializer(serializers.ModelSerializer):
    class Meta:
        model = Workload
        fields = ["id", "name", "version"]


class MetricSerializer(serializers.ModelSerializer):
    class Meta:
        model = Metric
        fields = ["id", "name", "unit", "better", "description"]


class SetupSerializer(serializers.ModelSerializer):
    workload = serializers.CharField(source="workload.name")
    workload_version = serializers.CharField(source="workload.version")
    hardware = serializers.CharField(source="hardware.name")
    params = ParamsField()
    run_count = serializers.IntegerField(help_text="runs of this setup")

    class Meta:
        model = Setup
        fields = ["id", "workload", "workload_version", "hardware", "mode", "params", "run_count"]


class TrialSerializer(serializers.ModelSerializer):
    class Meta:
        model = Trial
        fields = ["number", "discarded"]


class MetricValuesSerializer(serializers.Serializer):
    """One metric's values in a run: a run's detail keys them by the metric's name."""

    unit = serializers.CharField()
    better = serializers.ChoiceField(choices=Better.choices)
    trials = serializers.ListField(child=serializers.IntegerField(), help_text="0: no trials")
    values = serializers.ListField(child=serializers.FloatField(), help_text="per trial")
    discarded_trials = serializers.ListField(child=serializers.IntegerField())
    mean = serializers.FloatField(allow_null=True, help_text="of the kept trials")
    sd = serializers.FloatField(allow_null=True, help_text="null below two kept values")
    n = serializers.IntegerField()


class ResultSerializer(MetricValuesSerializer):
    """One metric's values in a run, as ``/api/runs/<id>/results/`` lists them."""

    metric = serializers.CharField()


class ProfileEntrySerializer(serializers.ModelSerializer):
    class Meta:
        model = ProfileEntry
        fields = ["trial", "source", "function", "ticks", "load", "share_pct"]


class TimeSeriesSerializer(serializers.ModelSerializer):
    values = serializers.ListField(child=serializers.FloatField())
    indexes = serializers.ListField(
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="row numbers of the values when some rows were left out, else null",
    )
    timestamps = serializers.ListField(child=serializers.CharField())

    class Meta:
        model = Sample
        fields = [
            "id",
            "trial",
            "source",
            "column",
            "values",
            "indexes",
            "first_is_since_boot",
            "timestamps",
        ]


class HistogramSerializer(serializers.ModelSerializer):
    bins = PairsField(help_text="[[x, count], …]")

    class Meta:
        model = Histogram
        fields = ["id", "trial", "name", "x_label", "bins"]


class CurveSerializer(serializers.ModelSerializer):
    points = PairsField(help_text="[[x, y], …]")

    class Meta:
        model = Curve
        fields = ["id", "trial", "name", "x_label", "y_label", "points"]


class RawFileSerializer(serializers.ModelSerializer):
    download = serializers.SerializerMethodField(help_text="the file's bytes (text/plain)")
    warnings = serializers.ListField(child=serializers.CharField())

    class Meta:
        model = RawFile
        fields = ["id", "path", "parser", "trial", "sha256", "warnings", "download"]

    def get_download(self, obj: RawFile) -> str:
        url = reverse("raw-file", args=[obj.run_id, obj.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(url) if request else url


class BaselineSerializer(serializers.ModelSerializer):
    pinned_by = serializers.CharField(source="pinned_by.username", allow_null=True, default=None)

    class Meta:
        model = PinnedBaseline
        fields = ["id", "setup", "metric", "run", "pinned_by"]


class SeriesMetaSerializer(serializers.Serializer):
    workload = serializers.CharField()
    hardware = serializers.CharField()
    mode = serializers.ChoiceField(choices=Mode.choices)
    params = ParamsField()
    metric = serializers.CharField()
    unit = serializers.CharField()
    better = serializers.ChoiceField(choices=Better.choices)


class AlertSerializer(serializers.ModelSerializer):
    series = serializers.SerializerMethodField()
    setup = serializers.IntegerField(source="setup_id")
    metric = serializers.IntegerField(source="metric_id")
    baseline_run = serializers.SerializerMethodField(help_text="the baseline run ids")
    candidate_run = serializers.IntegerField(source="candidate_run_id")
    kernel = serializers.CharField(source="candidate_run.kernel.version")
    patches = serializers.SerializerMethodField()
    assignee = serializers.CharField(source="assignee.username", allow_null=True, default=None)
    page = serializers.SerializerMethodField()
    reattributed = serializers.SerializerMethodField(
        help_text="the step re-placed on a neighbouring kernel by a later check, oldest first: "
        "at, from (kernel, run, change), to (the same, and why); not emailed again"
    )
    location_share = serializers.FloatField(
        allow_null=True,
        help_text="a step's alert: how likely it is that the step starts at this kernel (0-1), "
        "as the latest check read it (set when the alert is confirmed or moved, and updated "
        "when a later check reads it differently, e.g. after the kernels it named are re-run); "
        "null for a pairwise change (its kernel is the one compared)",
    )
    runner_up = serializers.SerializerMethodField(
        help_text="a step's alert: the next likeliest first kernel of the step (its run, "
        "kernel and share), null if none or for a pairwise change"
    )
    state_note = serializers.CharField(
        read_only=True,
        help_text="what a pending or cleared alert means and what will confirm it (run 3 "
        "trials; the next kernel), in words; empty for a confirmed or triaged alert",
    )

    class Meta:
        model = Alert
        fields = [
            "id",
            "series",
            "setup",
            "metric",
            "baseline_run",
            "candidate_run",
            "kernel",
            "patches",
            "change_pct",
            "p_value",
            "confidence",
            "method",
            "status",
            "direction",
            "recovered",
            "assignee",
            "notes",
            "created_at",
            "page",
            "reattributed",
            "location_share",
            "runner_up",
            "state_note",
        ]

    @extend_schema_field(SeriesMetaSerializer)
    def get_series(self, alert: Alert) -> dict:
        return {
            "workload": alert.setup.workload.name,
            "hardware": alert.setup.hardware.name,
            "mode": alert.setup.mode,
            "params": alert.setup.params,
            "metric": alert.metric.name,
            "unit": alert.metric.unit,
            "better": alert.metric.better,
        }

    def get_baseline_run(self, alert: Alert) -> list[int]:
        return [r.pk for r in alert.baseline_runs.all()]

    @extend_schema_field(
        inline_serializer(
            "AlertReattribution",
            {
                "at": serializers.DateTimeField(),
                "from": serializers.CharField(),
                "to": serializers.CharField(),
            },
            many=True,
        )
    )
    def get_reattributed(self, alert: Alert) -> list[dict[str, object]]:
        return moves.moves_json(alert)

    @extend_schema_field(
        inline_serializer(
            "AlertRunnerUp",
            {
                "run": serializers.IntegerField(),
                "kernel": serializers.CharField(),
                "share": serializers.FloatField(),
            },
            allow_null=True,
        )
    )
    def get_runner_up(self, alert: Alert) -> dict[str, object] | None:
        return placement.runner_up_json(alert)

    def get_patches(self, alert: Alert) -> list[str]:
        return [p for p in alert.candidate_run.patch_set.name.split("+") if p]

    @extend_schema_field(OpenApiTypes.URI)
    def get_page(self, alert: Alert) -> str:
        url = reverse("alert-detail", args=[alert.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(url) if request else url


class AlertEventSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    user = serializers.CharField(
        source="user.username", allow_null=True, default=None, help_text="null: the system"
    )
    field = serializers.CharField(
        help_text="status, assignee, notes (triage); kernel (re-attributed), merged, location "
        "(the placement a later check settled or unsettled)"
    )
    old = serializers.CharField()
    new = serializers.CharField()


class AlertDetailSerializer(AlertSerializer):
    """One alert as its page shows it: every field of a list row, and its history."""

    history = AlertEventSerializer(
        source="events.all",
        many=True,
        help_text="every change to the alert, oldest first, as its page lists them",
    )

    class Meta(AlertSerializer.Meta):
        fields = [*AlertSerializer.Meta.fields, "history"]


class StrictBooleanField(serializers.BooleanField):
    """true or false only (DRF would also take 0, 1, "yes", "on")."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class StrictCharField(serializers.CharField):
    """A JSON string only (DRF would turn 0 or false into "0", "False")."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictFloatField(serializers.FloatField):
    """A JSON number only (DRF would also take false, true and numeric strings)."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return super().to_internal_value(data)


class SubscriptionSerializer(serializers.ModelSerializer):
    email = serializers.EmailField(read_only=True, help_text="always your account's address")
    active = StrictBooleanField(required=False, default=True)
    workload_pattern = StrictCharField(required=False, default="*", max_length=100)
    hardware_pattern = StrictCharField(required=False, default="*", max_length=100)
    metric_pattern = StrictCharField(required=False, default="*", max_length=100)
    min_change_pct = StrictFloatField(
        required=False, default=0, min_value=0, max_value=1e6, help_text="absolute %"
    )

    class Meta:
        model = Subscription
        fields = [
            "id",
            "email",
            "workload_pattern",
            "hardware_pattern",
            "metric_pattern",
            "min_change_pct",
            "delivery",
            "active",
            "created_at",
        ]
        read_only_fields = ["id", "email", "created_at"]


@extend_schema_field(
    {
        "type": "number",
        "format": "double",
        "minimum": 0,
        "exclusiveMinimum": True,
        "maximum": 1e6,
        "nullable": True,
    }
)
class PercentField(StrictFloatField):
    """A percentage the detector divides by: a JSON number, finite and > 0, or null
    (``policy.validate_threshold_pct``, the check the model and the admin make)."""

    def __init__(self, **kwargs):
        super().__init__(allow_null=True, required=False, default=None, max_value=1e6, **kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        try:
            return validate_threshold_pct(value)
        except ValueError as error:
            raise serializers.ValidationError(str(error)) from error


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": 2**63 - 1})
class IdField(serializers.PrimaryKeyRelatedField):
    """An object's id: a JSON integer that fits a bigint, else a 400 (DRF would look up "7",
    and 2**70 would be a database error); an id of no object is a 404 naming it."""

    default_error_messages = {"id": "an id: a whole number from 1 to 2**63 - 1"}

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int) or not 1 <= data < 2**63:
            self.fail("id")
        rows = self.get_queryset()
        try:
            return rows.get(pk=data)
        except rows.model.DoesNotExist as error:
            raise NotFound(f"no {rows.model._meta.verbose_name} {data}") from error


class ThresholdSerializer(serializers.ModelSerializer):
    workload = IdField(queryset=Workload.objects.all(), help_text="workload id")
    workload_name = serializers.CharField(source="workload.name", read_only=True)
    metric = IdField(queryset=Metric.objects.all(), help_text="metric id")
    metric_name = serializers.CharField(source="metric.name", read_only=True)
    metric_unit = serializers.CharField(source="metric.unit", read_only=True)
    threshold_pct = PercentField(
        help_text="fixed threshold, % change, replacing the one the detector derives from the "
        "series' noise; null: derived"
    )
    typical_noise_pct = PercentField(
        help_text="typical sd of one kernel's result, %: the detector's prior for a short "
        "series; null: pooled from the workload's other setups"
    )

    class Meta:
        model = Threshold
        fields = [
            "id",
            "workload",
            "workload_name",
            "metric",
            "metric_name",
            "metric_unit",
            "threshold_pct",
            "typical_noise_pct",
        ]
        validators: list = []  # one row per (workload, metric): threshold_save says so
