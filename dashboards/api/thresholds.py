"""The detector's settings per workload and metric (``Threshold``) in the API.

``GET /api/thresholds/`` (filters ``workload``, ``metric``: ids) and
``/api/thresholds/<id>/`` are open to readers, as the compare page's reasons that quote them
are; staff create, change and delete them (``POST``, ``PUT``/``PATCH``, ``DELETE``), checked
as the admin checks them (``perfdb.alerting.thresholds.threshold_save``): each number finite
and > 0 or null, one row per workload and metric. The next check of a series uses them.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import generics
from rest_framework.exceptions import APIException
from rest_framework.exceptions import ValidationError as DRFValidationError
from rest_framework.parsers import JSONParser

from dashboards.api.alerts import IsStaffOrReadOnly
from dashboards.api.catalog import IdFilter, StrictFilterSet
from dashboards.api.errors import (
    DETAIL_ERRORS,
    NOT_FOUND,
    READ_ERRORS,
    WRITE_ERRORS,
    DetailSerializer,
)
from dashboards.api.serializers import ThresholdSerializer
from perfdb.alerting.thresholds import Taken, threshold_save
from perfdb.models import Threshold

TAKEN = OpenApiResponse(
    DetailSerializer, description="the workload and metric have a threshold already: change it"
)

CHANGED = {200: ThresholdSerializer, 404: NOT_FOUND, 409: TAKEN, **WRITE_ERRORS}


class Conflict(APIException):
    status_code = 409
    default_code = "conflict"


ROWS = Threshold.objects.select_related("workload", "metric").order_by("workload_id", "metric_id")


class ThresholdFilter(StrictFilterSet):
    workload = IdFilter(field_name="workload_id", help_text="workload id")
    metric = IdFilter(field_name="metric_id", help_text="metric id")

    class Meta:
        model = Threshold
        fields = ["workload", "metric"]


class ThresholdWrites(generics.GenericAPIView):
    """Staff writes through ``threshold_save``; a refused row is a 400 naming its field."""

    queryset = ROWS
    serializer_class = ThresholdSerializer
    permission_classes = [IsStaffOrReadOnly]
    parser_classes = [JSONParser]

    def _save(self, serializer: ThresholdSerializer, row: Threshold) -> None:
        for name, value in serializer.validated_data.items():
            setattr(row, name, value)
        try:
            serializer.instance = threshold_save(row)
        except ValidationError as error:
            raise DRFValidationError(error.message_dict) from error
        except Taken as taken:
            where = f"/api/thresholds/{taken.existing_id}/"
            raise Conflict(f"{taken}: change it with PATCH {where}") from taken

    def perform_create(self, serializer):
        self._save(serializer, Threshold())

    def perform_update(self, serializer):
        self._save(serializer, serializer.instance)


@extend_schema_view(
    get=extend_schema(
        summary="The detector's settings staff set per workload and metric",
        responses={200: ThresholdSerializer, **READ_ERRORS},
    ),
    post=extend_schema(
        summary="Set a workload and metric's fixed threshold and/or typical noise (staff)",
        responses={201: ThresholdSerializer, 409: TAKEN, **WRITE_ERRORS},
    ),
)
class ThresholdList(ThresholdWrites, generics.ListCreateAPIView):
    filterset_class = ThresholdFilter


@extend_schema_view(
    get=extend_schema(
        summary="One workload and metric's detector settings",
        responses={200: ThresholdSerializer, **DETAIL_ERRORS},
    ),
    put=extend_schema(
        summary="Replace a workload and metric's detector settings (staff)", responses=CHANGED
    ),
    patch=extend_schema(
        summary="Change a workload and metric's detector settings (staff)", responses=CHANGED
    ),
    delete=extend_schema(
        summary="Remove them: the detector derives its threshold and prior again (staff)",
        responses={204: OpenApiResponse(description="deleted"), 404: NOT_FOUND, **WRITE_ERRORS},
    ),
)
class ThresholdDetail(ThresholdWrites, generics.RetrieveUpdateDestroyAPIView):
    lookup_url_kwarg = "threshold_id"
