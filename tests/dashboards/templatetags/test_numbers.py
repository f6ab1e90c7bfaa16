"""The template filters: a p-value written as the compare page writes it, a change with its
sign."""

from __future__ import annotations

import pytest
from django.template import Context, Template


@pytest.mark.parametrize(
    ("p", "text"), [(1e-7, "p &lt; 0.0001"), (0.0001, "p = 0.0001"), (0.0312, "p = 0.0312")]
)
def test_p_text(p, text):
    rendered = Template("{% load numbers %}{{ p|p_text }}").render(Context({"p": p}))
    assert rendered == text


@pytest.mark.parametrize(
    ("template", "text"),
    [
        ("{{ v|change }}", "+139.9 %"),
        ("{{ w|change }}", "-32.6 %"),
        ("{{ v|change:2 }}", "+139.95 %"),
        ("{{ none|change }}", "—"),
    ],
)
def test_change_has_its_sign(template, text):
    context = Context({"v": 139.9496, "w": -32.64, "none": None})
    assert Template("{% load numbers %}" + template).render(context) == text
