"""The plain chart data (dashboards/pure/chartdata.py): a series refuses a point on a kernel
its x order does not list, so a builder never has to guess where to draw it."""

from __future__ import annotations

import pytest

from dashboards.pure.chartdata import Point, Series
from tests.dashboards.figures.literals import KERNELS, THROUGHPUT, run


def test_a_series_rejects_a_point_on_an_unlisted_kernel():
    with pytest.raises(ValueError, match="2.6.0"):
        Series(THROUGHPUT, KERNELS, (Point(run(1, "2.6.0"), 1.0),))
