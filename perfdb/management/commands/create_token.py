"""python manage.py create_token USERNAME [--staff] [--rotate]: print the user's API token."""

from django.core.management.base import BaseCommand

from perfdb.accounts import token_get, token_rotate, user_ensure


class Command(BaseCommand):
    help = "Create the user if needed and print only their API token (for lab upload scripts)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--staff", action="store_true", help="make the user staff (triage)")
        parser.add_argument("--rotate", action="store_true", help="replace any existing token")

    def handle(self, *args, username: str, staff: bool, rotate: bool, **options):
        user = user_ensure(username=username, staff=staff)
        key = token_rotate(user=user) if rotate else token_get(user=user)
        self.stdout.write(key)
