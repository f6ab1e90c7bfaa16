"""Answers sent compressed where the client accepts it (settings' CompressionMiddleware):
pages, kept answers and JSON, identical once decoded, the CSP nonce intact."""

from __future__ import annotations

import gzip
import re

import brotli
import pytest

from perfdb.models import Metric

pytestmark = pytest.mark.django_db


def decoded(response) -> bytes:
    body = b"".join(response.streaming_content) if response.streaming else response.content
    encoding = response.get("Content-Encoding", "")
    if encoding == "br":
        return brotli.decompress(body)
    if encoding == "gzip":
        return gzip.decompress(body)
    assert encoding == "", encoding
    return body


@pytest.mark.parametrize("encoding", ["br", "gzip"])
def test_a_page_is_sent_compressed_and_decodes_to_the_same_page(client, data, encoding):
    plain = client.get("/kernels/")
    assert plain.status_code == 200 and "Content-Encoding" not in plain
    packed = client.get("/kernels/", HTTP_ACCEPT_ENCODING=f"{encoding}, identity")
    assert packed["Content-Encoding"] == encoding
    assert "Accept-Encoding" in packed["Vary"]
    assert len(packed.content) < len(plain.content) / 3
    html = decoded(packed).decode()
    # The page's own nonce, where its Content-Security-Policy header states one.
    stated = re.search(r"'nonce-([^']+)'", packed["Content-Security-Policy"])
    if stated:
        assert f'nonce="{stated.group(1)}"' in html
    assert without_nonces(html) == without_nonces(plain.content.decode())


def without_nonces(html: str) -> str:
    return re.sub(r'nonce="[^"]*"', 'nonce=""', html)


def test_a_kept_answer_is_compressed_as_well(client, data):
    run = data.run("2.5.25")
    metric = Metric.objects.get(name="throughput")
    query = {"setup": run.setup_id, "metric": metric.pk}
    plain = client.get("/api/series/", query)
    first = client.get("/api/series/", query, HTTP_ACCEPT_ENCODING="br")
    again = client.get("/api/series/", query, HTTP_ACCEPT_ENCODING="gzip")
    assert plain.status_code == first.status_code == again.status_code == 200
    assert (first["Content-Encoding"], again["Content-Encoding"]) == ("br", "gzip")
    assert decoded(first) == decoded(again) == plain.content


def test_a_client_that_accepts_nothing_gets_it_plain(client, data):
    response = client.get("/kernels/", HTTP_ACCEPT_ENCODING="identity")
    assert "Content-Encoding" not in response
    assert b"<main>" in response.content
