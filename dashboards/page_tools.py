"""What every chart page shares: 400s for bad parameters, the links between pages, CSV/JSON
downloads, and a run's one-line text."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from dashboards import exports
from dashboards.selection import (
    BadParam,
    choice_param,
)


def bad_params_are_400(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except BadParam as error:
            context = {"param": error.name, "message": error.message, "back": request.path}
            return render(request, "dashboards/bad_request.html", context, status=400)

    return wrapped


def links(view_name: str, selection: Mapping[str, object], charts: tuple[str, ...]) -> dict:
    """The permalink of the current selection and each chart's CSV / JSON download."""
    base = reverse(view_name)
    kept = {k: v for k, v in selection.items() if v not in (None, "")}
    out: dict[str, Any] = {"permalink": f"{base}?{urlencode(kept, doseq=True)}", "downloads": []}
    for chart in charts:
        urls = {
            fmt: f"{base}?{urlencode({**kept, 'format': fmt, 'chart': chart}, doseq=True)}"
            for fmt in exports.FORMATS
        }
        out["downloads"].append({"chart": chart, **urls})
    return out


def download(tables: tuple[exports.Table, ...], request: HttpRequest, fmt: str) -> HttpResponse:
    names = tuple(t.name for t in tables)
    chart = choice_param(request.GET, "chart", names, names[0])
    table = exports.pick(tables, chart)
    assert table is not None
    return exports.export_response(table, fmt)


def run_text(run, label: str = "") -> str:
    text = f"#{run.run_id} {run.build}"
    return f"{text} ({label})" if label else text
