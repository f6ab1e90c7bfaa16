"""What runs are keyed by: kernels, patches, hardware, workloads, metrics, and setups."""

from __future__ import annotations

import hashlib
from typing import Any

from django.contrib.postgres.fields import ArrayField
from django.db import models

from perfdb.kernels import parse_kernel
from perfdb.models.checks import finite


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

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.normalize()
        super().save(*args, **kwargs)

    def normalize(self) -> None:
        """The version as its canonical text and the sort key read from it: what ``save``
        stores, and what a bulk insert (which skips ``save``) must call first."""
        version = parse_kernel(self.version)
        self.version = version.text
        self.sort_key = list(version.sort_key)


class Patch(models.Model):
    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)

    def __str__(self) -> str:
        return self.name


class PatchSet(models.Model):
    """An ordered list of patches; ``name`` joins them with '+', '' is the stock kernel."""

    name = models.CharField(max_length=500, unique=True, blank=True)
    patches: models.ManyToManyField[Patch, PatchSetItem] = models.ManyToManyField(
        Patch, through="PatchSetItem", related_name="patch_sets"
    )

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
    # The smallest step the metric can show, in its unit (``time``: 0.01 s, a profile: 1 tick),
    # from the parser that first stored it; None = the detector reads it from the values.
    resolution = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["name", "unit"]
        constraints = [
            models.UniqueConstraint(fields=["name", "unit"], name="metric_uniq"),
            # A zero, negative or NaN quantum would make every difference (or none) count.
            models.CheckConstraint(
                condition=finite("resolution", null=True, positive=True),
                name="metric_resolution_positive",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.unit})"


def params_digest(params: dict[str, Any]) -> str:
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
