"""perfdb/operations/client_ip.py: the client's address past the trusted proxies, and nothing a
client writes in X-Forwarded-For believed beyond them."""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from perfdb.operations.client_ip import client_ip, parse_trusted_proxies


def ip(settings, trusted, remote: str, forwarded: str | None = None) -> str:
    settings.TRUSTED_PROXIES = trusted
    headers = {} if forwarded is None else {"HTTP_X_FORWARDED_FOR": forwarded}
    return client_ip(RequestFactory().get("/", REMOTE_ADDR=remote, **headers))


def test_without_proxies_the_header_is_ignored(settings):
    assert ip(settings, 0, "192.0.2.7", "198.51.100.1") == "192.0.2.7"


@pytest.mark.parametrize(
    ("trusted", "remote", "forwarded", "client"),
    [
        # nginx appends its peer: a client's own entries stay on the left, never believed.
        (1, "127.0.0.1", "203.0.113.9", "203.0.113.9"),
        (1, "127.0.0.1", "1.2.3.4, 203.0.113.9", "203.0.113.9"),
        (2, "10.0.0.2", "1.2.3.4, 203.0.113.9, 10.0.0.1", "203.0.113.9"),
        (1, "127.0.0.1", None, "127.0.0.1"),  # reached the app past the proxy
        (1, "127.0.0.1", "not-an-address", "127.0.0.1"),
        (
            ["127.0.0.1/32", "10.0.0.0/8"],
            "10.0.0.2",
            "1.2.3.4, 203.0.113.9, 10.0.0.1",
            "203.0.113.9",
        ),
        (["127.0.0.1/32"], "127.0.0.1", "1.2.3.4, 203.0.113.9", "203.0.113.9"),
        # Not from a trusted proxy: its header says anything, REMOTE_ADDR is the client.
        (["127.0.0.1/32"], "192.0.2.7", "203.0.113.9", "192.0.2.7"),
        (["::1/128"], "::1", "[2001:db8::5]:443", "2001:db8::5"),
        (["127.0.0.1/32"], "127.0.0.1", "::ffff:192.0.2.8", "192.0.2.8"),
    ],
)
def test_the_client_is_the_first_hop_left_of_our_proxies(
    settings, trusted, remote, forwarded, client
):
    assert ip(settings, trusted, remote, forwarded) == client


def test_the_setting_is_a_count_or_networks_and_a_typo_stops_the_server():
    assert parse_trusted_proxies("") == 0
    assert parse_trusted_proxies(" 2 ") == 2
    assert parse_trusted_proxies("127.0.0.1, 10.0.0.0/8") == ["127.0.0.1", "10.0.0.0/8"]
    with pytest.raises(ValueError, match="10.0.0.0/33"):
        parse_trusted_proxies("127.0.0.1,10.0.0.0/33")
