"""The API's error answers, one shape each, all JSON.

* 400 from a bad parameter (``BadParam`` from dashboards/pure/selection.py, the one reader of
  request parameters): ``{"error": "<param>: <what is allowed>", "param": "<param>"}``;
* 400 from a serializer (a request body): ``{"error": ..., "param": <first field>,
  "fields": {field: [messages]}}``;
* 401/403/404/405/429 (DRF's own): ``{"detail": "..."}``.

``ErrorSerializer`` / ``DetailSerializer`` state them in the OpenAPI schema.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from dashboards.pure.selection import BadParam


class ErrorSerializer(serializers.Serializer):
    error = serializers.CharField(help_text="what is wrong and what is allowed")
    param = serializers.CharField(allow_null=True, help_text="the parameter or field at fault")
    # a field named like Serializer.fields: DRF's serializer metaclass keeps the two apart
    fields = serializers.DictField(  # type: ignore[assignment]
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="per request-body field, its messages",
    )


class DetailSerializer(serializers.Serializer):
    detail = serializers.CharField()


BAD_REQUEST = OpenApiResponse(ErrorSerializer, description="a parameter is not valid")
NOT_FOUND = OpenApiResponse(DetailSerializer, description="no such object, or no such page")
UNAUTHORIZED = OpenApiResponse(DetailSerializer, description="a token is needed, or was wrong")
FORBIDDEN = OpenApiResponse(DetailSerializer, description="staff only, or not yours")
THROTTLED = OpenApiResponse(DetailSerializer, description="too many requests; retry later")
UNSUPPORTED = OpenApiResponse(DetailSerializer, description="the body's content type is not taken")
TOO_LARGE = OpenApiResponse(DetailSerializer, description="the body is over the bundle limit")
READ_ERRORS = {400: BAD_REQUEST, 429: THROTTLED}
DETAIL_ERRORS = {400: BAD_REQUEST, 404: NOT_FOUND, 429: THROTTLED}
WRITE_ERRORS = {400: BAD_REQUEST, 401: UNAUTHORIZED, 403: FORBIDDEN, 429: THROTTLED}


def bad_param_response(error: BadParam) -> Response:
    return Response({"error": str(error), "param": error.name}, status=400)


def _first_message(detail: Any) -> tuple[str | None, str]:
    if isinstance(detail, dict):
        for key, value in detail.items():
            _, text = _first_message(value)
            return (None if key == "non_field_errors" else str(key)), text
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    return None, str(detail)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, BadParam):
        return bad_param_response(exc)
    if isinstance(exc, DjangoValidationError):  # a service refused a value (triage status)
        text = " ".join(exc.messages)
        return Response({"error": text, "param": None}, status=400)
    response = drf_exception_handler(exc, context)
    if (
        response is not None
        and response.status_code == 400
        and not isinstance(exc, ValidationError)
    ):
        # A body that does not parse (ParseError) and other 400s: the same shape.
        detail = response.data.get("detail", "") if isinstance(response.data, dict) else ""
        response.data = {"error": str(detail) or "bad request", "param": None}
    if response is not None and isinstance(exc, ValidationError):
        param, text = _first_message(exc.detail)
        body: dict[str, Any] = {"error": f"{param}: {text}" if param else text, "param": param}
        if isinstance(exc.detail, dict):
            body["fields"] = {
                str(k): [str(m) for m in (v if isinstance(v, list) else [v])]
                for k, v in exc.detail.items()
            }
        response.data = body
    return response
