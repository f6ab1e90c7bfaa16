"""The scaling page draws the newest builds by default and lets you pick others (URL)."""

from __future__ import annotations

import pytest

from dashboards.page_data import scaling as scaling_data
from tests.dashboards.scaling_builds import figure_builds, scaling_runs  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


def test_default_is_the_newest_builds_and_a_choice_is_kept_in_the_url(
    client,
    scaling_runs,  # noqa: F811
    monkeypatch,
):
    monkeypatch.setattr(scaling_data, "SCALING_MAX_BUILDS", 2)
    default = client.get("/scaling/")
    assert default.status_code == 200
    assert figure_builds(default) == ["2.5.59", "2.5.66"]
    chosen = client.get("/scaling/?builds=2.4.17&builds=2.5.66")
    assert figure_builds(chosen) == ["2.4.17", "2.5.66"]
    assert "builds=2.4.17&amp;builds=2.5.66" in chosen.content.decode()  # the permalink


def test_an_unknown_build_is_a_400(client, scaling_runs):  # noqa: F811
    response = client.get("/scaling/?builds=9.9.9")
    assert response.status_code == 400 and "builds" in response.content.decode()
