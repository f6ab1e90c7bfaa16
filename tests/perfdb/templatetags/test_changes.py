"""The ``change`` filter: a change written with its sign."""

from __future__ import annotations

import pytest
from django.template import Context, Template


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
    assert Template("{% load changes %}" + template).render(context) == text
