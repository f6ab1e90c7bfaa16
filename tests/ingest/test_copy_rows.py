"""The writer sends float arrays to COPY as PostgreSQL array text (ingest.copy_rows.float_array):
every double must read back as the same double."""

from __future__ import annotations

import math
import random

import pytest
from django.db import connection

from ingest.copy_rows import float_array

pytestmark = pytest.mark.django_db


def test_float_arrays_read_back_bit_for_bit():
    rng = random.Random(18)
    values = [0.1, 1 / 3, -0.0, 5e-324, 1e-300, 1.7976931348623157e308, 250000.0, 2**53 + 1.0]
    values += [rng.uniform(-1e6, 1e6) for _ in range(500)] + [
        rng.lognormvariate(0, 30) for _ in range(500)
    ]
    values += [math.inf, -math.inf, math.nan]
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::float8[]", [float_array(values)])
        (stored,) = cursor.fetchone()
    assert len(stored) == len(values)
    for sent, got in zip(values, stored, strict=True):
        assert (math.isnan(sent) and math.isnan(got)) or (
            sent == got and math.copysign(1, sent) == math.copysign(1, got)
        ), (sent, got)


def test_an_empty_array_and_integral_values():
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::float8[], %s::float8[]", [float_array([]), float_array([3, 4])])
        assert cursor.fetchone() == ([], [3.0, 4.0])
