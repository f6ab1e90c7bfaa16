"""The allow-list of transient errors: a task retries these (with backoff) and nothing else.

A lost database connection shows up as Django's OperationalError/InterfaceError, or as the
raw psycopg error when it happens inside a COPY (which talks to the driver directly); a lost
broker or cache as redis/kombu connection errors. Everything else is a bug or bad data and
is recorded where a person sees it, never retried blindly.
"""

from __future__ import annotations

import contextlib

import psycopg
import redis.exceptions
from django.db import InterfaceError, OperationalError, connection
from kombu.exceptions import OperationalError as KombuOperationalError

TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    OperationalError,
    InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    KombuOperationalError,
    ConnectionError,
)


def reset_connection() -> None:
    """Drop this process's database connection after a transient error, so the retry starts
    on a fresh one rather than failing again on the dead socket."""
    # Closing a dead connection may raise; it is closed either way.
    with contextlib.suppress(Exception):
        connection.close()
