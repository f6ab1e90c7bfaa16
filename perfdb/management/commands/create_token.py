"""python manage.py create_token USERNAME [--staff] [--rotate] [--email ADDRESS]: print the
user's API token."""

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from perfdb.operations.accounts import token_get, token_rotate, user_ensure


class Command(BaseCommand):
    help = "Create the user if needed and print only their API token (for lab upload scripts)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--staff", action="store_true", help="make the user staff (triage)")
        parser.add_argument("--rotate", action="store_true", help="replace any existing token")
        parser.add_argument(
            "--email",
            help="set the account's address (alert subscriptions are sent only to it)",
        )

    def handle(
        self,
        *args: Any,
        username: str,
        staff: bool,
        rotate: bool,
        email: str | None = None,
        **options: Any,
    ) -> None:
        try:
            user = user_ensure(username=username, staff=staff, email=email)
        except ValidationError as exc:
            raise CommandError(f"--email {email!r}: {' '.join(exc.messages)}") from exc
        key = token_rotate(user=user) if rotate else token_get(user=user)
        self.stdout.write(key)
