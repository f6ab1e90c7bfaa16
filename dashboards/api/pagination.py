"""Page-number pagination whose ``page`` is read like every other parameter: a positive
whole number, else a 400 naming it (DRF's own reads ``page=`` as page 1 and ``page=x`` as
a 404). A page past the end is still a 404. A caller that knows how many items there are
(from a summary) says so, and the list is not counted again."""

from __future__ import annotations

from functools import cached_property

from django.core.paginator import Paginator
from rest_framework.pagination import PageNumberPagination

from dashboards.pure.selection import BadParam, int_param


def _counted(known: int) -> type[Paginator]:
    """Django's paginator with its ``count`` given, not a ``COUNT(*)`` of the list."""

    class Counted(Paginator):
        @cached_property
        def count(self) -> int:
            return known

    return Counted


class Pagination(PageNumberPagination):
    page_size = 50

    def __init__(self, count: int | None = None) -> None:
        """``count``: the number of items, when the caller knows it (None: counted)."""
        if count is not None:
            self.django_paginator_class = _counted(count)

    def get_page_number(self, request, paginator):
        if self.page_query_param not in request.query_params:
            return 1
        number = int_param(request.query_params, self.page_query_param)
        if number is None or number < 1:
            raise BadParam(self.page_query_param, "expected a page number ≥ 1")
        return number

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_query_param:
                parameter["schema"] = {"type": "integer", "minimum": 1, "maximum": 10**18 - 1}
        return parameters
