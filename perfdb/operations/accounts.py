"""User accounts and API tokens for uploaders (DRF's Token model, one per user)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.core.validators import validate_email
from django.db import transaction
from django.http import HttpRequest
from rest_framework.authtoken.models import Token


class AuthenticatedHttpRequest(HttpRequest):
    """The request a ``login_required`` view is given: its user is signed in (for mypy; at
    run time it is an ordinary HttpRequest)."""

    user: User


def signed_in(user: AbstractBaseUser | AnonymousUser) -> User:
    """The request's user, who must be signed in (views whose permission already demands it
    call this to hand services a ``User``)."""
    if not isinstance(user, User):
        raise PermissionDenied("sign in first")
    return user


@transaction.atomic
def user_ensure(*, username: str, staff: bool = False, email: str | None = None) -> User:
    """Get or create a user; ``staff`` only ever grants staff, never takes it away. ``email``
    (checked, ValidationError otherwise) replaces the address: alert subscriptions go only to
    the account's own address, so a lab account made from the shell needs one to subscribe."""
    user, _ = get_user_model().objects.get_or_create(username=username)
    changed = []
    if staff and not user.is_staff:
        user.is_staff = True
        changed.append("is_staff")
    if email is not None:
        validate_email(email)
        if user.email != email:
            user.email = email
            changed.append("email")
    if changed:
        user.save(update_fields=changed)
    return user


def token_get(*, user: User) -> str:
    token, _ = Token.objects.get_or_create(user=user)
    key: str = token.key
    return key


@transaction.atomic
def token_rotate(*, user: User) -> str:
    """Replace the user's token: the old one stops working at once."""
    Token.objects.filter(user=user).delete()
    key: str = Token.objects.create(user=user).key
    return key
