"""Factories for the core stored objects (factory_boy), so a test builds a run, a setup or an
alert in one line and names only what matters to it:

    run = RunFactory(kernel__version="2.5.25", patch_set__name="O(1)")
    ResultFactory(run=run, metric__name="throughput", value=13000.0)
    alert = AlertFactory(candidate_run=run, status="pending")

Defaults are the vocabulary of docs/DESIGN: VolanoMark 2.1.2 on the 8-way PIII ("P8") in UP
mode, throughput in msg/s (higher is better). Rows with a natural key (kernel version,
hardware name, workload name and version, metric name and unit, patch-set name, setup keys)
are fetched when they exist, as ingest does, so two factories naming "2.4.20" share one
kernel. A test that is about ingest builds its data through a bundle (tests/bundles.py), not
here: these rows skip the parsers and the writer on purpose.

One place to change when a model gains a required field (a helper, not a test module).
"""

from __future__ import annotations

import hashlib
from typing import Any

import factory
from django.contrib.auth import get_user_model
from factory.django import DjangoModelFactory

from perfdb.models import (
    Alert,
    AlertEvent,
    Hardware,
    Kernel,
    Metric,
    OutboxMessage,
    Patch,
    PatchSet,
    PatchSetItem,
    PinnedBaseline,
    ProfileEntry,
    RawFile,
    Result,
    ResultSummary,
    Run,
    Sample,
    Setup,
    Subscription,
    Threshold,
    Trial,
    Upload,
    Workload,
    params_digest,
)

# --- people -------------------------------------------------------------------------------


class UserFactory(DjangoModelFactory):
    """A lab account with a usable password (``{username}-password-1``) and no email address
    (as ``createsuperuser`` leaves it): subscribing then needs one, so a test gives it."""

    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")

    @factory.post_generation
    def password(obj, create: bool, extracted: str | None, **kwargs: Any) -> None:
        # The password names its user, so a test that logs in needs no lookup.
        obj.set_password(extracted or f"{obj.username}-password-1")
        if create:
            obj.save(update_fields=["password"])


class StaffFactory(UserFactory):
    is_staff = True


# --- the vocabulary: what runs are keyed by ----------------------------------------------


class KernelFactory(DjangoModelFactory):
    """A kernel version (``Kernel.save`` computes its sort key from the name)."""

    class Meta:
        model = Kernel
        django_get_or_create = ("version",)

    version = factory.Sequence(lambda n: f"6.{n}.0")


class CommitKernelFactory(KernelFactory):
    """A kernel named by git: a commit on a tree, ordered by what is stated about it (its
    ``describe``, ``base`` kernel and commit time; perfdb.kernels.ref_sort_key)."""

    version = factory.Sequence(lambda n: hashlib.sha1(f"commit {n}".encode()).hexdigest()[:12])
    tree = "linus/master"


class PatchSetFactory(DjangoModelFactory):
    """A patch set by its name (``"task+sched"``); ``""`` is the stock kernel. Its patches and
    their order are made from the name, as ingest makes them."""

    class Meta:
        model = PatchSet
        django_get_or_create = ("name",)
        skip_postgeneration_save = True

    name = ""

    @factory.post_generation
    def items(obj, create: bool, extracted: Any, **kwargs: Any) -> None:
        if not create or not obj.name or obj.items.exists():
            return
        for position, name in enumerate(obj.name.split("+")):
            patch, _ = Patch.objects.get_or_create(name=name)
            PatchSetItem.objects.create(patch_set=obj, patch=patch, position=position)


class HardwareFactory(DjangoModelFactory):
    """The 8-way 700 MHz Pentium III of 001 (``P8``), the hardware of tests/bundles.py."""

    class Meta:
        model = Hardware
        django_get_or_create = ("name",)

    name = "P8"
    cpus = 8
    cpu_model = "Pentium III"
    mhz = 700


class WorkloadFactory(DjangoModelFactory):
    class Meta:
        model = Workload
        django_get_or_create = ("name", "version")

    name = "VolanoMark"
    version = "2.1.2"


class MetricFactory(DjangoModelFactory):
    """VolanoMark's throughput; name another and say its unit and direction."""

    class Meta:
        model = Metric
        django_get_or_create = ("name", "unit")

    name = "throughput"
    unit = "msg/s"
    better = "higher"


class SetupFactory(DjangoModelFactory):
    """Workload + hardware + mode + parameters: one series per metric."""

    class Meta:
        model = Setup
        django_get_or_create = ("workload", "hardware", "mode", "params_digest")

    workload = factory.SubFactory(WorkloadFactory)
    hardware = factory.SubFactory(HardwareFactory)
    mode = "UP"
    params = factory.LazyFunction(lambda: {"rooms": 10, "messages": 1000})
    params_digest = factory.LazyAttribute(lambda o: params_digest(o.params))


# --- uploads, runs and what hangs off a run ----------------------------------------------


class UploadFactory(DjangoModelFactory):
    """An Upload row with no bundle behind it (its pages and sweeps read the row only)."""

    class Meta:
        model = Upload

    filename = factory.Sequence(lambda n: f"bundle-{n}.tar.gz")
    sha256 = factory.Sequence(lambda n: hashlib.sha256(f"upload {n}".encode()).hexdigest())
    size = 1
    file = "x"


class RunFactory(DjangoModelFactory):
    """A stock run of the default setup on a new kernel; name the kernel, patches or setup."""

    class Meta:
        model = Run

    setup = factory.SubFactory(SetupFactory)
    kernel = factory.SubFactory(KernelFactory)
    patch_set = factory.SubFactory(PatchSetFactory)
    fingerprint = factory.Sequence(lambda n: hashlib.sha256(f"run {n}".encode()).hexdigest())


class TrialFactory(DjangoModelFactory):
    class Meta:
        model = Trial
        django_get_or_create = ("run", "number")

    run = factory.SubFactory(RunFactory)
    number = 1


class ResultFactory(DjangoModelFactory):
    """One value of a run (trial 0: the run-level value); its setup is the run's."""

    class Meta:
        model = Result

    run = factory.SubFactory(RunFactory)
    setup = factory.SelfAttribute("run.setup")
    metric = factory.SubFactory(MetricFactory)
    trial = 0
    value = 13000.0


class ResultSummaryFactory(DjangoModelFactory):
    """The spread a report states for a run's value (``± 2%``)."""

    class Meta:
        model = ResultSummary

    run = factory.SubFactory(RunFactory)
    metric = factory.SubFactory(MetricFactory)
    sd_pct = 2.0


class ProfileEntryFactory(DjangoModelFactory):
    class Meta:
        model = ProfileEntry

    run = factory.SubFactory(RunFactory)
    function = "schedule"
    ticks = 10.0


class RawFileFactory(DjangoModelFactory):
    """A stored harness output of a run, as the run page lists it for download."""

    class Meta:
        model = RawFile

    run = factory.SubFactory(RunFactory)
    path = factory.Sequence(lambda n: f"volano/trial{n}.log")
    parser = "volanomark"
    content = b"data"
    sha256 = factory.LazyAttribute(lambda o: hashlib.sha256(o.content).hexdigest())


class SampleFactory(DjangoModelFactory):
    """One vmstat column over a run."""

    class Meta:
        model = Sample

    run = factory.SubFactory(RunFactory)
    source = "vmstat"
    column = "cs"
    values = factory.LazyFunction(lambda: [1.0])


# --- alerts and email -------------------------------------------------------------------


class AlertFactory(DjangoModelFactory):
    """An untriaged regression of the candidate run's series (a t-test at 99 %)."""

    class Meta:
        model = Alert

    candidate_run = factory.SubFactory(RunFactory)
    setup = factory.SelfAttribute("candidate_run.setup")
    metric = factory.SubFactory(MetricFactory)
    change_pct = -6.3
    confidence = 0.99
    method = "ttest"
    direction = Alert.Direction.REGRESSION
    status = Alert.Status.UNTRIAGED


class AlertEventFactory(DjangoModelFactory):
    class Meta:
        model = AlertEvent

    alert = factory.SubFactory(AlertFactory)
    field = "status"
    old = Alert.Status.UNTRIAGED
    new = Alert.Status.ACKNOWLEDGED


class ThresholdFactory(DjangoModelFactory):
    class Meta:
        model = Threshold
        django_get_or_create = ("workload", "metric")

    workload = factory.SubFactory(WorkloadFactory)
    metric = factory.SubFactory(MetricFactory)
    threshold_pct = 5.0


class PinnedBaselineFactory(DjangoModelFactory):
    """A baseline a user pins for the run's series ("Base1" in 002)."""

    class Meta:
        model = PinnedBaseline

    run = factory.SubFactory(RunFactory)
    setup = factory.SelfAttribute("run.setup")
    metric = factory.SubFactory(MetricFactory)


class SubscriptionFactory(DjangoModelFactory):
    """Every alert, at once, to the user's lab address."""

    class Meta:
        model = Subscription

    user = factory.SubFactory(UserFactory)
    email = factory.LazyAttribute(lambda o: f"{o.user.username}@lab.example")


class OutboxMessageFactory(DjangoModelFactory):
    """A pending message; to a subscription's address when given one."""

    class Meta:
        model = OutboxMessage

    subscription = None
    to = factory.LazyAttribute(
        lambda o: o.subscription.email if o.subscription else "lab@lab.example"
    )
    subject = "perfdb: regression"
    text = "a regression"


def make_alert(run, metric, status="untriaged", direction="regression", change_pct=-6.3):
    """An alert on ``run`` (positional form kept for the modules that still call it)."""
    return AlertFactory(
        candidate_run=run,
        metric=metric,
        status=status,
        direction=direction,
        change_pct=change_pct,
    )
