"""User accounts and API tokens for uploaders (DRF's Token model, one per user)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.db import transaction
from rest_framework.authtoken.models import Token


@transaction.atomic
def user_ensure(*, username: str, staff: bool = False) -> AbstractUser:
    """Get or create a user; ``staff`` only ever grants staff, never takes it away."""
    user, _ = get_user_model().objects.get_or_create(username=username)
    if staff and not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    return user


def token_get(*, user: AbstractUser) -> str:
    token, _ = Token.objects.get_or_create(user=user)
    return token.key


@transaction.atomic
def token_rotate(*, user: AbstractUser) -> str:
    """Replace the user's token: the old one stops working at once."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user).key
