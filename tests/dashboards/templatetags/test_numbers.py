"""The template filters: a p-value written as the compare page writes it."""

from __future__ import annotations

import pytest
from django.template import Context, Template


@pytest.mark.parametrize(
    ("p", "text"), [(1e-7, "p &lt; 0.0001"), (0.0001, "p = 0.0001"), (0.0312, "p = 0.0312")]
)
def test_p_text(p, text):
    rendered = Template("{% load numbers %}{{ p|p_text }}").render(Context({"p": p}))
    assert rendered == text
