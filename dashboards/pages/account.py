"""The account page (``/account/``): the logged-in user's API token, and rotating it."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect, render

from perfdb.operations.accounts import AuthenticatedHttpRequest, token_get, token_rotate


@login_required
def account(request: AuthenticatedHttpRequest) -> HttpResponse:
    if request.method == "POST" and request.POST.get("rotate"):
        token_rotate(user=request.user)
        return redirect("account")
    return render(request, "dashboards/account.html", {"token": token_get(user=request.user)})
