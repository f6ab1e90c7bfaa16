"""Django admin for every model, with the filters an operator reaches for."""

from django import forms
from django.contrib import admin

from perfdb import models
from perfdb.detector.policy import validate_threshold_pct


@admin.register(models.Kernel)
class KernelAdmin(admin.ModelAdmin):
    list_display = ["version", "sort_key"]
    search_fields = ["version"]
    readonly_fields = ["sort_key"]


class PatchSetItemInline(admin.TabularInline):
    model = models.PatchSetItem
    extra = 0


@admin.register(models.PatchSet)
class PatchSetAdmin(admin.ModelAdmin):
    list_display = ["__str__"]
    search_fields = ["name"]
    inlines = [PatchSetItemInline]


@admin.register(models.Patch)
class PatchAdmin(admin.ModelAdmin):
    search_fields = ["name"]


@admin.register(models.Hardware)
class HardwareAdmin(admin.ModelAdmin):
    list_display = ["name", "cpus", "cpu_model", "mhz", "l2_kb", "memory_mb"]
    search_fields = ["name", "cpu_model", "notes"]


@admin.register(models.Workload)
class WorkloadAdmin(admin.ModelAdmin):
    list_display = ["name", "version"]
    search_fields = ["name"]


@admin.register(models.Metric)
class MetricAdmin(admin.ModelAdmin):
    """Staff give a metric without a direction (vmstat's ``vmstat_cs_mean``) one here, so a
    change of it can alert from the next upload on; uploads whose parser says "none" keep it
    (docs/parsers/vmstat.md)."""

    list_display = ["name", "unit", "better"]
    list_editable = ["better"]
    list_filter = ["better"]
    search_fields = ["name"]


@admin.register(models.Setup)
class SetupAdmin(admin.ModelAdmin):
    list_display = ["__str__", "mode"]
    list_filter = ["mode", "workload", "hardware"]
    list_select_related = ["workload", "hardware"]


class TrialInline(admin.TabularInline):
    model = models.Trial
    extra = 0


class RawFileInline(admin.TabularInline):
    model = models.RawFile
    extra = 0
    readonly_fields = ("path", "parser", "trial", "sha256")
    fields = readonly_fields


@admin.register(models.Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "setup", "kernel", "patch_set", "label", "upload", "created_at"]
    list_filter = ["setup__workload", "setup__hardware", "setup__mode", "synthetic"]
    list_select_related = ["setup__workload", "setup__hardware", "kernel", "patch_set", "upload"]
    search_fields = ["kernel__version", "patch_set__name", "label", "notes"]
    raw_id_fields = ["setup", "kernel", "patch_set", "upload"]
    inlines = [TrialInline, RawFileInline]


@admin.register(models.Result)
class ResultAdmin(admin.ModelAdmin):
    list_display = ["id", "run", "metric", "trial", "value", "discarded"]
    list_filter = ["metric"]
    raw_id_fields = ["run", "setup"]
    list_select_related = ["metric", "run__kernel", "run__patch_set", "run__setup__workload"]


@admin.register(models.ProfileEntry)
class ProfileEntryAdmin(admin.ModelAdmin):
    list_display = ["run", "function", "ticks", "share_pct"]
    raw_id_fields = ["run"]
    search_fields = ["function"]


@admin.register(models.Sample)
class SampleAdmin(admin.ModelAdmin):
    list_display = ["run", "source", "column", "trial"]
    exclude = ["values", "indexes", "timestamps"]
    raw_id_fields = ["run"]


@admin.register(models.Histogram, models.Curve)
class DistributionAdmin(admin.ModelAdmin):
    list_display = ["run", "name", "trial"]
    raw_id_fields = ["run"]


@admin.register(models.Trial)
class TrialAdmin(admin.ModelAdmin):
    list_display = ["run", "number", "discarded"]
    raw_id_fields = ["run"]


@admin.register(models.RawFile)
class RawFileAdmin(admin.ModelAdmin):
    list_display = ["run", "path", "parser", "trial"]
    raw_id_fields = ["run"]
    exclude = ["content"]


@admin.register(models.Upload)
class UploadAdmin(admin.ModelAdmin):
    list_display = ["id", "filename", "status", "user", "files_done", "files_total", "created_at"]
    list_filter = ["status", "source"]
    search_fields = ["filename", "sha256", "error"]


class AlertEventInline(admin.TabularInline):
    model = models.AlertEvent
    extra = 0
    readonly_fields = ["user", "field", "old", "new", "at"]


@admin.register(models.Alert)
class AlertAdmin(admin.ModelAdmin):
    list_display = ["id", "setup", "metric", "candidate_run", "change_pct", "status", "direction"]
    list_filter = ["status", "direction", "method", "recovered"]
    raw_id_fields = ["candidate_run", "baseline_runs", "upload", "setup"]
    inlines = [AlertEventInline]


@admin.register(models.PinnedBaseline)
class SeriesSettingAdmin(admin.ModelAdmin):
    raw_id_fields = ["metric"]


class ThresholdForm(forms.ModelForm):
    """Both numbers finite and > 0 (perfdb.detector.policy.validate_threshold_pct), or empty."""

    class Meta:
        model = models.Threshold
        fields = ["workload", "metric", "threshold_pct", "typical_noise_pct"]

    def _valid(self, name: str) -> float | None:
        try:
            return validate_threshold_pct(self.cleaned_data.get(name))
        except ValueError as error:
            raise forms.ValidationError(str(error)) from error

    def clean_threshold_pct(self) -> float | None:
        return self._valid("threshold_pct")

    def clean_typical_noise_pct(self) -> float | None:
        return self._valid("typical_noise_pct")


@admin.register(models.Threshold)
class ThresholdAdmin(admin.ModelAdmin):
    form = ThresholdForm
    list_display = ["workload", "metric", "threshold_pct", "typical_noise_pct"]
    raw_id_fields = ["metric"]


@admin.register(models.Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    list_display = ["email", "workload_pattern", "hardware_pattern", "metric_pattern", "delivery"]
    list_filter = ["delivery", "active"]


@admin.register(models.OutboxMessage)
class OutboxMessageAdmin(admin.ModelAdmin):
    list_display = ["id", "to", "subject", "status", "attempts", "created_at", "sent_at"]
    list_filter = ["status"]
    readonly_fields = ["last_error"]


@admin.register(models.ReferenceBuild)
class ReferenceBuildAdmin(admin.ModelAdmin):
    """The control build re-run on a hardware (or for one setup); alerts raised while it
    shifts are held (perfdb/features/reference.py)."""

    list_display = ["id", "hardware", "setup", "kernel", "patch_set", "created_at"]
    raw_id_fields = ["setup"]


@admin.register(models.ReferenceHold)
class ReferenceHoldAdmin(admin.ModelAdmin):
    list_display = ["alert", "build", "shift_pct", "p_value", "created_at"]
    raw_id_fields = ["alert", "reference_setup"]


@admin.register(models.Claim)
class ClaimAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "candidate",
        "baseline",
        "stated_change_pct",
        "computed_change_pct",
        "verdict",
    ]
    list_filter = ["verdict"]
    search_fields = ["source", "candidate", "baseline", "document"]
    raw_id_fields = ["setup", "upload"]
