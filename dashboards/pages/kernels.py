"""The across-kernels page (/kernels/): one metric of one setup across kernels and patch
sets, its figure (/kernels/figure/) and its CSV/JSON downloads (``/kernels/?format=csv``).

Each view reads its query once (``selection.KernelsQuery``), takes its answer from one call
to ``series_data`` (which chooses the series and reads it through the cache), and renders
or sends it. The page does not embed its figure: its chart fetches it once from
/kernels/figure/ (a 1,000-kernel series is ~260 kB of figure JSON, which the page's HTML
would carry on every visit), with the series' alert marks drawn in: the page with its data
is two requests. An anonymous reader's whole answer is kept until an upload to the setup or
an alert write (``dashboards/page_cache/kept.py``) and served before the middleware stack runs.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboards.page_cache.kept import kept_while_current
from dashboards.page_data import series_data
from dashboards.page_data.scopes import scope_index
from dashboards.pure.selection import ACROSS_KERNELS, KernelsQuery
from dashboards.web.page_tools import bad_params_are_400, download_response, links


@kept_while_current
@bad_params_are_400
def kernels(request: HttpRequest) -> HttpResponse:
    """The page, or its series as a download when the query asks for one (``format``). A
    page whose URL names no set-up opens on the newest open regression (the series a reader
    most likely came for), else on the busiest set-up."""
    query = KernelsQuery.read(request.GET, lambda: scope_index().scopes)
    if query.format is not None:
        body = series_data.series_download(query)
        return download_response(body, ACROSS_KERNELS, query.format)
    page = series_data.series_page(query)
    context: dict[str, object] = {"page": page}
    if page.metric is not None:
        context.update(links("dashboards-kernels", page.selection, (ACROSS_KERNELS,)))
        context["figure_src"] = links("dashboards-kernels-figure", page.selection, ())["permalink"]
    return render(request, "dashboards/kernels.html", context)


@kept_while_current
@bad_params_are_400
def kernels_figure(request: HttpRequest) -> HttpResponse:
    """The page's figure as JSON (what its chart fetches), its series' alert marks drawn
    over it: the same selection as the page."""
    query = KernelsQuery.read(request.GET, lambda: scope_index().scopes)
    return HttpResponse(series_data.series_figure(query), content_type="application/json")
