"""Alerts and subscriptions for the API.

``GET /api/alerts/`` (filters as on /alerts/), ``GET /api/alerts/<id>/`` (with its history,
as its page lists it); staff triage one
(``PATCH /api/alerts/<id>/``: status, assignee, notes, each change in the alert's history) or
many (``POST /api/alerts/triage/``). ``/api/subscriptions/``: your own subscriptions only,
always to your account's address.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import generics, serializers
from rest_framework.exceptions import NotFound
from rest_framework.exceptions import ValidationError as DRFValidationError
from rest_framework.parsers import JSONParser
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dashboards.api.errors import DETAIL_ERRORS, FORBIDDEN, NOT_FOUND, READ_ERRORS, WRITE_ERRORS
from dashboards.api.schema import TEXT
from dashboards.api.serializers import (
    AlertDetailSerializer,
    AlertSerializer,
    StrictCharField,
    SubscriptionSerializer,
)
from dashboards.pages.alert_forms import own_address
from dashboards.pages.alerts import STATUS_CHOICES, alert_filters
from dashboards.pure.selection import strict_choice_param
from perfdb.alerting import queries
from perfdb.alerting.triage import alert_triage, alerts_bulk_triage, subscription_save
from perfdb.models import Alert, Subscription
from perfdb.operations.accounts import signed_in

ALERT_FILTERS = [
    OpenApiParameter("status", str, enum=STATUS_CHOICES, description="'open': not yet resolved"),
    OpenApiParameter("direction", str, enum=Alert.Direction.values),
    OpenApiParameter("workload", TEXT, description="workload name"),
    OpenApiParameter("hardware", TEXT, description="hardware name"),
    OpenApiParameter("kernel", TEXT, description="the candidate run's kernel version"),
    OpenApiParameter("patch", TEXT, description="a patch in the candidate run's patch set"),
]


class IsStaffOrReadOnly(BasePermission):
    open_for_reading = True  # the schema marks reads as needing no token

    def has_permission(self, request, view) -> bool:
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        return bool(request.user and request.user.is_authenticated and request.user.is_staff)


class AlertList(generics.ListAPIView):
    serializer_class = AlertSerializer

    def get_queryset(self):
        query = self.request.query_params
        strict_choice_param(query, "status", STATUS_CHOICES)  # present and empty: a 400
        strict_choice_param(query, "direction", Alert.Direction.values)
        return queries.alerts_filtered(**alert_filters(query))

    @extend_schema(
        summary="Alerts (regressions and improvements), newest first, paginated",
        parameters=ALERT_FILTERS,
        responses={200: AlertSerializer, **READ_ERRORS},
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class TriageSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=Alert.Status.choices, required=False)
    assignee = StrictCharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=150,
        help_text="a username; null or '' to unassign",
    )
    notes = StrictCharField(required=False, allow_blank=True, max_length=10000)

    def validate_assignee(self, value):
        if not value:
            return None
        user = get_user_model().objects.filter(username=value, is_active=True).first()
        if user is None:  # a well-formed name of no one: the object named is not found
            raise NotFound(f"no active user {value!r}")
        return user


class BulkTriageSerializer(serializers.Serializer):
    ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**62), min_length=1, max_length=500
    )
    status = serializers.ChoiceField(choices=Alert.Status.choices)


class BulkTriageResult(serializers.Serializer):
    updated = serializers.IntegerField()
    status = serializers.CharField()


class AlertDetail(APIView):
    permission_classes = [IsStaffOrReadOnly]
    parser_classes = [JSONParser]

    def _shown(self, request: Request, alert_id: int) -> Response:
        alerts = queries.alerts_filtered().prefetch_related("events__user")
        alert = get_object_or_404(alerts, pk=alert_id)
        return Response(AlertDetailSerializer(alert, context={"request": request}).data)

    @extend_schema(
        summary="One alert, with its history",
        responses={200: AlertDetailSerializer, **DETAIL_ERRORS},
    )
    def get(self, request: Request, alert_id: int) -> Response:
        return self._shown(request, alert_id)

    @extend_schema(
        summary="Triage one alert (staff): status, assignee, notes; recorded in its history",
        request=TriageSerializer,
        responses={200: AlertDetailSerializer, 404: NOT_FOUND, **WRITE_ERRORS},
    )
    def patch(self, request: Request, alert_id: int) -> Response:
        alert = get_object_or_404(Alert, pk=alert_id)
        body = TriageSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        changes = dict(body.validated_data)
        alert_triage(
            alert_id=alert.pk,
            user=signed_in(request.user),
            status=changes.get("status"),
            assignee=changes.get("assignee", "unchanged"),
            notes=changes.get("notes"),
        )
        return self._shown(request, alert_id)


class AlertBulkTriage(APIView):
    permission_classes = [IsStaffOrReadOnly]
    parser_classes = [JSONParser]

    @extend_schema(
        summary="Set the status of many alerts at once (staff)",
        request=BulkTriageSerializer,
        responses={200: BulkTriageResult, 404: NOT_FOUND, **WRITE_ERRORS},
    )
    def post(self, request: Request) -> Response:
        body = BulkTriageSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        ids = list(dict.fromkeys(body.validated_data["ids"]))
        found = set(Alert.objects.filter(pk__in=ids).values_list("pk", flat=True))
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFound(f"no alert {missing[0]}")
        status = body.validated_data["status"]
        count = alerts_bulk_triage(alert_ids=ids, user=signed_in(request.user), status=status)
        return Response({"updated": count, "status": status})


class OwnSubscriptions(generics.GenericAPIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [JSONParser]
    serializer_class = SubscriptionSerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator
            return Subscription.objects.none()
        return Subscription.objects.filter(user=self.request.user).order_by("id")


@extend_schema_view(
    get=extend_schema(
        summary="Your subscriptions",
        responses={
            200: SubscriptionSerializer,
            401: WRITE_ERRORS[401],
            403: FORBIDDEN,
            429: WRITE_ERRORS[429],
        },
    ),
    post=extend_schema(
        summary="Subscribe your account's address to alerts matching patterns",
        responses={201: SubscriptionSerializer, **WRITE_ERRORS},
    ),
)
class SubscriptionList(OwnSubscriptions, generics.ListCreateAPIView):
    def perform_create(self, serializer):
        from django.core.exceptions import ValidationError

        user = self.request.user
        try:
            email = own_address(user, user.email or "")
        except ValidationError as exc:
            raise DRFValidationError({"email": exc.messages}) from exc
        serializer.instance = subscription_save(
            user=user,
            subscription=Subscription(user=user, email=email, **serializer.validated_data),
        )


@extend_schema_view(
    get=extend_schema(
        summary="One of your subscriptions",
        responses={200: SubscriptionSerializer, 404: NOT_FOUND, **WRITE_ERRORS},
    ),
    put=extend_schema(
        summary="Change one of your subscriptions",
        responses={200: SubscriptionSerializer, 404: NOT_FOUND, **WRITE_ERRORS},
    ),
    patch=extend_schema(
        summary="Change one of your subscriptions",
        responses={200: SubscriptionSerializer, 404: NOT_FOUND, **WRITE_ERRORS},
    ),
    delete=extend_schema(
        summary="Delete one of your subscriptions",
        responses={204: OpenApiResponse(description="deleted"), 404: NOT_FOUND, **WRITE_ERRORS},
    ),
)
class SubscriptionDetail(OwnSubscriptions, generics.RetrieveUpdateDestroyAPIView):
    lookup_url_kwarg = "subscription_id"
