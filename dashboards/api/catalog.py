"""Read-only API over what runs are made of: kernels (in kernel order), patches, patch
sets, hardware, workloads, metrics, setups and pinned baselines.

Anonymous reads, like the pages; each list is paginated as /api/runs/ (``page``, 50 a
page) and filtered with django-filter (a bad filter value is a 400 naming it).
"""

from __future__ import annotations

import django_filters
from django import forms
from django.db.models import F
from django.db.models.functions import Coalesce
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import generics

from dashboards.api import serializers as s
from dashboards.api.errors import DETAIL_ERRORS
from perfdb.models import (
    Hardware,
    Kernel,
    Metric,
    Mode,
    Patch,
    PatchSet,
    PinnedBaseline,
    Setup,
    Workload,
)


def documented(summary: str, serializer):
    """The schema of a list view (and of its detail view): 200, 400, 404, 429."""
    return extend_schema(summary=summary, responses={200: serializer, **DETAIL_ERRORS})


class StrictFilterSet(django_filters.FilterSet):
    """A filter given with an empty value is a 400 (django-filter would ignore it), so a
    parameter typed as an enum or a number in the schema accepts nothing else."""

    def is_valid(self) -> bool:
        valid = super().is_valid()
        for name, flt in self.filters.items():
            typed = isinstance(flt, django_filters.ChoiceFilter | django_filters.NumberFilter)
            data = self.data or {}
            if typed and name in data and data.get(name) in ("", None):
                self.form.add_error(name, "give a value or leave the parameter out")
                valid = False
        return valid


class KernelFilter(StrictFilterSet):
    version = django_filters.CharFilter(help_text="exact version, e.g. 2.5.59")

    class Meta:
        model = Kernel
        fields = ["version"]


@extend_schema_view(
    get=documented("Kernels, in kernel order (2.4.9 before 2.4.10)", s.KernelSerializer)
)
class KernelList(generics.ListAPIView):
    queryset = Kernel.objects.order_by("sort_key", "version")
    serializer_class = s.KernelSerializer
    filterset_class = KernelFilter


@extend_schema_view(get=documented("One kernel", s.KernelSerializer))
class KernelDetail(generics.RetrieveAPIView):
    queryset = Kernel.objects.all()
    serializer_class = s.KernelSerializer


class NameFilter(StrictFilterSet):
    name = django_filters.CharFilter(help_text="exact name")


class PatchFilter(NameFilter):
    class Meta:
        model = Patch
        fields = ["name"]


@extend_schema_view(get=documented("Patches, by name", s.PatchSerializer))
class PatchList(generics.ListAPIView):
    queryset = Patch.objects.order_by("name")
    serializer_class = s.PatchSerializer
    filterset_class = PatchFilter


class PatchSetFilter(StrictFilterSet):
    name = django_filters.CharFilter(help_text="patches joined with '+'; '' is stock")
    patch = django_filters.CharFilter(
        field_name="patches__name", help_text="sets that contain this patch"
    )

    class Meta:
        model = PatchSet
        fields = ["name", "patch"]


@extend_schema_view(
    get=documented("Patch sets (the stock kernel is the empty set)", s.PatchSetSerializer)
)
class PatchSetList(generics.ListAPIView):
    queryset = PatchSet.objects.order_by("name").distinct()
    serializer_class = s.PatchSetSerializer
    filterset_class = PatchSetFilter


class HardwareFilter(NameFilter):
    class Meta:
        model = Hardware
        fields = ["name"]


@extend_schema_view(get=documented("Hardware configurations", s.HardwareSerializer))
class HardwareList(generics.ListAPIView):
    queryset = Hardware.objects.order_by("name")
    serializer_class = s.HardwareSerializer
    filterset_class = HardwareFilter


@extend_schema_view(get=documented("One hardware configuration", s.HardwareSerializer))
class HardwareDetail(generics.RetrieveAPIView):
    queryset = Hardware.objects.all()
    serializer_class = s.HardwareSerializer


class WorkloadFilter(NameFilter):
    class Meta:
        model = Workload
        fields = ["name"]


@extend_schema_view(
    get=documented("Workloads (benchmarks) and their versions", s.WorkloadSerializer)
)
class WorkloadList(generics.ListAPIView):
    queryset = Workload.objects.order_by("name", "version")
    serializer_class = s.WorkloadSerializer
    filterset_class = WorkloadFilter


class MetricFilter(StrictFilterSet):
    name = django_filters.CharFilter(help_text="exact name, e.g. throughput")
    better = django_filters.ChoiceFilter(choices=[(c, c) for c in ("higher", "lower", "none")])

    class Meta:
        model = Metric
        fields = ["name", "better"]


@extend_schema_view(
    get=documented("Metrics: name, unit and which direction is better", s.MetricSerializer)
)
class MetricList(generics.ListAPIView):
    queryset = Metric.objects.order_by("name", "unit")
    serializer_class = s.MetricSerializer
    filterset_class = MetricFilter


class SetupFilter(StrictFilterSet):
    workload = django_filters.CharFilter(field_name="workload__name", help_text="workload name")
    hardware = django_filters.CharFilter(field_name="hardware__name", help_text="hardware name")
    mode = django_filters.ChoiceFilter(choices=Mode.choices)

    class Meta:
        model = Setup
        fields = ["workload", "hardware", "mode"]


# Run counts from the summaries PostgreSQL keeps (perfdb.models.SetupSummary; none for a
# setup without runs): counting every setup's runs had taken 0.6-1.1 s a page at 10M results.
SETUPS = (
    Setup.objects.select_related("workload", "hardware")
    .annotate(run_count=Coalesce(F("summary__run_count"), 0))
    .order_by("workload__name", "hardware__name", "mode", "id")
)


@extend_schema_view(
    get=documented(
        "Setups: workload × hardware × UP/SMP × parameters; a series is one setup's metric",
        s.SetupSerializer,
    )
)
class SetupList(generics.ListAPIView):
    queryset = SETUPS
    serializer_class = s.SetupSerializer
    filterset_class = SetupFilter


@extend_schema_view(get=documented("One setup", s.SetupSerializer))
class SetupDetail(generics.RetrieveAPIView):
    queryset = SETUPS
    serializer_class = s.SetupSerializer


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": 2**63 - 1})
class IdFilter(django_filters.NumberFilter):
    """An id: a whole number that fits a bigint (a decimal or a huge number is a 400)."""

    field_class = forms.IntegerField  # type: ignore[assignment]  # the stubs allow Decimal only

    def __init__(self, *args, **kwargs):
        super().__init__(*args, min_value=1, max_value=2**63 - 1, **kwargs)


class BaselineFilter(StrictFilterSet):
    setup = IdFilter(field_name="setup_id", help_text="setup id")
    metric = IdFilter(field_name="metric_id", help_text="metric id")

    class Meta:
        model = PinnedBaseline
        fields = ["setup", "metric"]


@extend_schema_view(
    get=documented(
        "Baselines staff pinned per series (setup, metric); detection compares against them",
        s.BaselineSerializer,
    )
)
class BaselineList(generics.ListAPIView):
    queryset = PinnedBaseline.objects.select_related("pinned_by").order_by("setup_id", "metric_id")
    serializer_class = s.BaselineSerializer
    filterset_class = BaselineFilter
