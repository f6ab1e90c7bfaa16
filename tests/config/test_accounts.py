"""Accounts: login, per-user API tokens, who may upload and who may triage."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token

from tests.conftest import ROOT

pytestmark = pytest.mark.django_db


def test_create_token_creates_the_user_and_prints_only_the_token(capsys, django_user_model):
    call_command("create_token", "lab1", "--staff")
    key = capsys.readouterr().out.strip()
    user = django_user_model.objects.get(username="lab1")
    assert user.is_staff
    assert Token.objects.get(user=user).key == key and len(key) == 40
    call_command("create_token", "lab1")
    assert capsys.readouterr().out.strip() == key  # stable unless rotated
    call_command("create_token", "lab1", "--rotate")
    assert capsys.readouterr().out.strip() != key


def test_create_token_sets_the_address_a_subscription_needs(capsys, client, django_user_model):
    from perfdb.models import Subscription

    call_command("create_token", "lab2", "--email", "lab2@example.org")
    capsys.readouterr()
    user = django_user_model.objects.get(username="lab2")
    assert user.email == "lab2@example.org"
    client.force_login(user)
    subscription = {
        "workload_pattern": "*",
        "hardware_pattern": "*",
        "metric_pattern": "*",
        "min_change_pct": "0",
        "delivery": "immediate",
        "active": "on",
        "email": "lab2@example.org",
    }
    client.post("/subscriptions/", subscription)
    assert Subscription.objects.get().email == "lab2@example.org"
    call_command("create_token", "lab2")  # without --email the address is kept
    assert django_user_model.objects.get(username="lab2").email == "lab2@example.org"


def test_create_token_refuses_an_address_that_is_not_one(django_user_model):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--email"):
        call_command("create_token", "lab3", "--email", "not-an-address")
    assert not django_user_model.objects.filter(username="lab3").exists()


def test_login_page_and_token_page(client, user):
    assert client.get("/login/").status_code == 200
    assert client.get("/account/").status_code == 302  # login required
    response = client.post("/login/", {"username": "lab", "password": "lab-password-1"})
    assert response.status_code == 302
    page = client.get("/account/")
    old = Token.objects.get(user=user).key
    assert old in page.content.decode()
    client.post("/account/", {"rotate": "1"})
    assert Token.objects.get(user=user).key != old


def test_logout(client, user):
    client.force_login(user)
    assert client.post("/logout/").status_code == 302
    assert client.get("/account/").status_code == 302


def test_anonymous_cannot_upload_but_can_read(client, tmp_path):
    from tests.bundles import volano_bundle

    with open(volano_bundle(tmp_path / "b.tar.gz"), "rb") as f:
        response = client.post("/api/uploads/", {"bundle": f})
    assert response.status_code in (401, 403)
    assert client.get("/api/runs/").status_code == 200
    assert client.get("/uploads/new/").status_code == 302


def test_a_rotated_token_stops_working(client, user, tmp_path):
    from perfdb.operations.accounts import token_get, token_rotate

    old = token_get(user=user)
    token_rotate(user=user)
    response = client.post("/api/uploads/", {}, HTTP_AUTHORIZATION=f"Token {old}")
    assert response.status_code == 401


def test_only_staff_triage(client, user, staff):
    client.force_login(user)
    assert client.post("/alerts/", {"alert": ["1"], "status": "invalid"}).status_code == 403


def test_production_settings_pass_check_deploy():
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "x" * 60 + "production-secret-key-for-the-check",
        "ALLOWED_HOSTS": "perfdb.example.com",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # set by the browser tests' process only
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_production_refuses_to_start_without_a_secret_key():
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr
