"""dashboards/web/page_tools.py: figure_script gives the same bytes as Django's json_script,
which escapes what could end the script element or start markup in it; a download is an
attachment named for its table."""

from __future__ import annotations

import datetime

import pytest
from django.utils.html import json_script

from dashboards.web.page_tools import download_response, figure_script

FIGURES = [
    {
        "data": [
            {"name": "</script><script>alert(1)</script>", "hovertext": ["a & b", "<b>x</b>"]}
        ],
        "layout": {"title": {"text": "2.6.3+o1 > 2.6.2 <!-- & -->"}},
    },
    {"data": [], "layout": {"title": "é ü 中 \u2028 \u2029 \\ \" '"}},
    {"x": [1.5, float("1e300"), -0.0], "when": datetime.date(2004, 1, 9), "none": None},
    [],
    "&&&<<<>>>",
]


@pytest.mark.parametrize("figure", FIGURES)
def test_figure_script_gives_json_scripts_bytes(figure):
    assert figure_script(figure, "fig-x") == json_script(figure, "fig-x")


def test_nothing_in_it_can_close_the_script_element():
    html = figure_script({"name": "</script><img src=x onerror=alert(1)>"}, "fig-x")
    assert html.count("</script>") == 1 and html.endswith("</script>")
    assert "<img" not in html


def test_the_element_id_is_escaped_as_an_attribute():
    assert figure_script([], 'a"b<') == json_script([], 'a"b<')


@pytest.mark.parametrize(
    ("fmt", "content_type"), [("csv", "text/csv; charset=utf-8"), ("json", "application/json")]
)
def test_a_download_is_an_attachment_named_for_its_table(fmt, content_type):
    """A browser saves a chart's table under the chart's name, typed by its format."""
    response = download_response(b"kernel,value\n2.6.0,1\n", "across-kernels", fmt)
    assert response["Content-Type"] == content_type
    assert response["Content-Disposition"] == f'attachment; filename="across-kernels.{fmt}"'
    assert response.content == b"kernel,value\n2.6.0,1\n"
