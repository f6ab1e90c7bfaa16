"""What runs are keyed by: kernels, patches, hardware, workloads, metrics, and setups."""

from __future__ import annotations

import hashlib
from typing import Any

from django.contrib.postgres.fields import ArrayField
from django.db import models

from perfdb.kernels import KernelRef, kernel_label, parse_kernel, ref_sort_key
from perfdb.models.checks import finite


class Better(models.TextChoices):
    HIGHER = "higher", "higher is better"
    LOWER = "lower", "lower is better"
    NONE = "none", "no direction"


class Mode(models.TextChoices):
    UP = "UP", "uniprocessor kernel"
    SMP = "SMP", "SMP kernel"


class Kernel(models.Model):
    """A kernel: a version (``6.8.0-rc3``) or a kernel named by git (a commit ``6e553c6bcb``, a
    linux-next tag ``next-20240521``); ``sort_key`` orders them as kernel people read them.

    A version's order is in its name. A git-named kernel's comes from what uploads state
    about it — ``describe``, ``base``, ``committed_at`` (``perfdb.kernels.ref_sort_key``,
    docs/kernels.md) — stated through ``perfdb.kernels.commits``, which recomputes the keys of
    the kernels based on it when its own changes. ``tree`` and ``subject`` only label it
    (``display``)."""

    version = models.CharField(max_length=64, unique=True)
    sort_key = ArrayField(models.IntegerField())
    # Stated for kernels named by git only; empty (or null) when not stated.
    tree = models.CharField(max_length=100, blank=True)  # "linux-next/master", first stated
    describe = models.CharField(max_length=100, blank=True)  # "v6.8-rc3-45-g5ef2dccfcc"
    base = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="based"
    )
    committed_at = models.DateTimeField(null=True, blank=True)
    subject = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["sort_key", "version"]
        indexes = [
            # Serves: ORDER BY kernel order for every across-kernels series.
            models.Index(fields=["sort_key", "version"], name="kernel_order_idx"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=~models.Q(base=models.F("id")), name="kernel_base_other"
            )
        ]

    def __str__(self) -> str:
        # The identity, not ``display``: pages and exports print ``str(kernel)`` where the
        # version is matched again (filters, downloads); a page that wants the label asks
        # for ``display``.
        return self.version

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.normalize()
        super().save(*args, **kwargs)

    @property
    def display(self) -> str:
        """The label a person reads: the version, or for a commit its short hash and subject
        (``6e553c6bcb77 ("fork: use __mt_dup() …")``) or describe (``… (v6.7-rc3+45)``)."""
        return kernel_label(
            self.version, subject=self.subject, describe=self.describe, tree=self.tree
        )

    def normalize(self) -> None:
        """The name as its canonical text and the sort key read from it and from what is
        stated (the base's stored key): what ``save`` stores, and what a bulk insert (which
        skips ``save``) must call first. ``linux-next/master@6e553c6bcb`` is commit
        ``6e553c6bcb`` with its tree."""
        name = parse_kernel(self.version)
        self.version = name.text
        if isinstance(name, KernelRef):
            self.tree = self.tree or name.tree
            base_key = None if self.base is None else tuple(self.base.sort_key)
            key = ref_sort_key(
                name, describe=self.describe, base_key=base_key, committed_at=self.committed_at
            )
            self.sort_key = list(key)
        else:
            self.sort_key = list(name.sort_key)


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

    name = models.CharField(max_length=300)
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
