"""CSV and JSON downloads (dashboards/web/exports.py)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_csv_cells_that_look_like_formulas_are_defused(client, data):
    from dashboards.web.exports import csv_cell

    assert csv_cell("=HYPERLINK(1)") == "'=HYPERLINK(1)" and csv_cell(-3.5) == -3.5
