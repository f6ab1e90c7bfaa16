"""Read-only API over what runs are made of: kernels (in kernel order), patches, patch
sets, hardware, workloads, metrics, setups and pinned baselines.

Anonymous reads, like the pages; each list is paginated as /api/runs/ (``page``, 50 a
page) and filtered with django-filter (a bad filter value is a 400 naming it).
"""

from __future__ import annotations

import django_filters
from django.db.models import Count
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics

from dashboards import api_serializers as s
from dashboards.api_errors import DETAIL_ERRORS
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


class KernelFilter(django_filters.FilterSet):
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


class NameFilter(django_filters.FilterSet):
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


class PatchSetFilter(django_filters.FilterSet):
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


class MetricFilter(django_filters.FilterSet):
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


class SetupFilter(django_filters.FilterSet):
    workload = django_filters.CharFilter(field_name="workload__name", help_text="workload name")
    hardware = django_filters.CharFilter(field_name="hardware__name", help_text="hardware name")
    mode = django_filters.ChoiceFilter(choices=Mode.choices)

    class Meta:
        model = Setup
        fields = ["workload", "hardware", "mode"]


SETUPS = (
    Setup.objects.select_related("workload", "hardware")
    .annotate(run_count=Count("runs"))
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


class BaselineFilter(django_filters.FilterSet):
    setup = django_filters.NumberFilter(field_name="setup_id", min_value=1)
    metric = django_filters.NumberFilter(field_name="metric_id", min_value=1)

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
