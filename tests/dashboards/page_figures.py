"""A chart's Plotly figure read out of a rendered page, as the browser would get it (a
helper, not a test module)."""

from __future__ import annotations

import json
import re
from html import unescape


def figure(response, chart_id: str) -> dict:
    """The figure a page hands to Plotly: through json_script, or the one its chart fetches
    from its ``data-src`` (the across-kernels page), asked with the same client."""
    html = response.content.decode()
    src = re.search(rf'id="{chart_id}-plot" data-figure="{chart_id}" data-src="([^"]+)"', html)
    if src:
        fetched = response.client.get(unescape(src.group(1)))
        assert fetched.status_code == 200 and fetched["Content-Type"] == "application/json"
        return json.loads(fetched.content)
    match = re.search(
        rf'<script id="{chart_id}" type="application/json">(.*?)</script>', html, re.S
    )
    assert match, f"no figure {chart_id}"
    return json.loads(match.group(1))
