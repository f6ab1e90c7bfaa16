"""What backs a number up or explains it away: reference builds, alerts held because their
reference moved, and claims stated in bundles with their check against the stored runs."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models

from perfdb.models.alerts import Alert
from perfdb.models.runs import Upload
from perfdb.models.vocabulary import Hardware, Kernel, Metric, PatchSet, Setup


class ReferenceBuild(models.Model):
    """A build (kernel + patch set) re-run regularly on the same hardware as a control.

    Named for one setup (``[[run]] reference``) or for every setup of a hardware
    (``[hardware.X] reference``); the setup's own wins."""

    hardware = models.ForeignKey(
        Hardware, null=True, blank=True, on_delete=models.CASCADE, related_name="references"
    )
    setup = models.ForeignKey(
        Setup, null=True, blank=True, on_delete=models.CASCADE, related_name="references"
    )
    kernel = models.ForeignKey(Kernel, on_delete=models.PROTECT, related_name="+")
    patch_set = models.ForeignKey(PatchSet, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(hardware__isnull=False) | models.Q(setup__isnull=False),
                name="reference_has_scope",
            ),
            models.UniqueConstraint(
                fields=["hardware"],
                condition=models.Q(setup__isnull=True),
                name="reference_hw_uniq",
            ),
            models.UniqueConstraint(
                fields=["setup"],
                condition=models.Q(setup__isnull=False),
                name="reference_setup_uniq",
            ),
        ]

    def __str__(self) -> str:
        where = self.setup or self.hardware
        return f"reference {self.build} for {where}"

    @property
    def build(self) -> str:
        return (
            f"{self.kernel.version}+{self.patch_set.name}"
            if self.patch_set.name
            else (self.kernel.version)
        )


class ReferenceHold(models.Model):
    """An alert raised while its reference build moved the same way: shared with the
    reference (an environment shift, likely), held out of email until someone triages it."""

    alert = models.OneToOneField(Alert, on_delete=models.CASCADE, related_name="reference_hold")
    reference_setup = models.ForeignKey(Setup, on_delete=models.CASCADE, related_name="+")
    metric = models.ForeignKey(Metric, on_delete=models.CASCADE, related_name="+")
    build = models.CharField(max_length=200)
    shift_pct = models.FloatField()
    p_value = models.FloatField(null=True, blank=True)
    reason = models.TextField(blank=True)
    recent_run_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"alert {self.alert_id} shared with reference {self.build} ({self.shift_pct:+.1f} %)"


class Claim(models.Model):
    """ "On setup S, candidate C is +42.2 % against baseline B on metric M", as a bundle states
    it (``[[claim]]``), and how the stored runs bear it out."""

    class Verdict(models.TextChoices):
        SUPPORTED = "supported"
        CONTRADICTED = "contradicted"
        NOT_TESTABLE = "not testable", "not testable with n = 1"
        NO_DATA = "no data", "no stored runs to check"

    upload = models.ForeignKey(
        Upload, null=True, blank=True, on_delete=models.SET_NULL, related_name="claims"
    )
    fingerprint = models.CharField(max_length=64, unique=True)
    setup = models.ForeignKey(
        Setup, null=True, blank=True, on_delete=models.SET_NULL, related_name="claims"
    )
    metric = models.ForeignKey(
        Metric, null=True, blank=True, on_delete=models.SET_NULL, related_name="claims"
    )
    setup_text = models.CharField(max_length=500)
    metric_name = models.CharField(max_length=300)
    baseline = models.CharField(max_length=300)  # a build ("2.5.66") or a run label
    candidate = models.CharField(max_length=300)
    stated_change_pct = models.FloatField()
    tolerance_pct = models.FloatField()  # how far the stated figure may be from the data
    source = models.TextField()  # the sentence that states it
    document = models.CharField(max_length=300, blank=True)
    computed_change_pct = models.FloatField(null=True, blank=True)
    ci_low_pct = models.FloatField(null=True, blank=True)
    ci_high_pct = models.FloatField(null=True, blank=True)
    n_baseline = models.PositiveIntegerField(default=0)
    n_candidate = models.PositiveIntegerField(default=0)
    verdict = models.CharField(max_length=14, choices=Verdict.choices, default=Verdict.NO_DATA)
    reason = models.TextField(blank=True)
    baseline_run_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    candidate_run_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"claim {self.pk}: {self.candidate} {self.stated_change_pct:+g} % ({self.verdict})"
