"""Token authentication that is throttled per client address on failures.

The address is the client's past the trusted proxies (``perfdb.operations.client_ip``): keyed on
``REMOTE_ADDR`` behind a proxy, twenty bad tokens from anyone refused every token user.

DRF authenticates before it throttles, so a wrong token is a 401 that no throttle ever
counts: 300 guesses in a row all got their answer. Here each failed token costs one count
per client address in the cache; past ``API_BAD_TOKEN_LIMIT`` failures in
``API_BAD_TOKEN_WINDOW`` seconds every token request from that address is a 429 until the
window passes (the right token too, so guessing cannot be told apart from success).
"""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache
from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed, Throttled

from perfdb.operations.client_ip import client_ip


class ThrottledTokenAuthentication(TokenAuthentication):
    def authenticate(self, request):
        key = f"perfdb:bad-token:{client_ip(request)}"
        limit = int(getattr(settings, "API_BAD_TOKEN_LIMIT", 20))
        window = int(getattr(settings, "API_BAD_TOKEN_WINDOW", 600))
        if "authorization" in request.headers and int(cache.get(key, 0)) >= limit:
            raise Throttled(wait=window, detail="too many failed tokens from this address")
        try:
            return super().authenticate(request)
        except AuthenticationFailed:
            if cache.add(key, 1, timeout=window) is False:
                try:
                    cache.incr(key)
                except ValueError:
                    cache.set(key, 1, timeout=window)
            raise
