"""What every chart page shares: 400s for bad parameters, the links between pages, CSV/JSON
downloads, a figure embedded in the page, and a run's one-line text."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.core.serializers.json import DjangoJSONEncoder
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from dashboards import chart_queries as cq
from dashboards.pure.selection import BadParam, choice_param, setup_ref_param
from dashboards.web import exports


def bad_params_are_400(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except BadParam as error:
            context = {"param": error.name, "message": error.message, "back": request.path}
            return render(request, "dashboards/bad_request.html", context, status=400)

    return wrapped


def setup_id_param(query: Mapping[str, Any], name: str = "setup") -> int | None:
    """``setup`` as an id, or as a person names it (``VolanoMark/P8/UP/rooms=10``:
    ``selection.setup_ref_param``) resolved among the set-ups with runs it names
    (``chart_queries.setup_id_of``). The pages and the API that take a set-up read it
    here, so a name means the same in each."""
    return cq.setup_id_of(setup_ref_param(query, name), name)


def figure_script(figure: object, element_id: str) -> SafeString:
    """Django's ``json_script(figure, element_id)``, the same bytes, made faster: its
    ``str.translate`` looks each character of the JSON up in a dict, 11 ms for a scope's
    0.5 MB scaling figure (a third of that chart's warm); three ``str.replace`` scan it in C.
    tests/dashboards/web/test_page_tools.py compares the two."""
    text = json.dumps(figure, cls=DjangoJSONEncoder)
    text = text.replace("&", "\\u0026").replace("<", "\\u003C").replace(">", "\\u003E")
    template = '<script id="{}" type="application/json">{}</script>'
    return format_html(template, element_id, mark_safe(text))


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
    return download_response(exports.table_text(table, fmt), table.name, fmt)


def download_response(body: str | bytes, name: str, fmt: str) -> HttpResponse:
    """A table's text (``exports.table_text``, kept or written now) as the download
    ``name.fmt``."""
    content_type = "text/csv; charset=utf-8" if fmt == "csv" else "application/json"
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


def run_text(run, label: str = "") -> str:
    text = f"#{run.run_id} {run.build}"
    return f"{text} ({label})" if label else text
