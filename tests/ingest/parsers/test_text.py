"""ingest/parsers/text.py: lines numbered, mail quotes and a mail's header block removed."""

import pytest

from ingest.parsers.text import numbered_lines, skip_mail_header, strip_mail_quotes


@pytest.mark.parametrize(
    ("line", "text"),
    [
        ("> > 1 2 3", "1 2 3"),
        (">>bar", "bar"),
        ("KP> 2.6.0: 11 MB/sec", "2.6.0: 11 MB/sec"),  # initials before the quote mark
        ("> ", ""),
        ("a > b", "a > b"),  # a '>' inside the line is no quote
        ("Alice> x", "Alice> x"),  # more than three letters: a word, not initials
        ("no quote", "no quote"),
    ],
)
def test_strip_mail_quotes(line, text):
    assert strip_mail_quotes(line) == text


def test_numbered_lines_end_at_any_line_break_and_lose_their_quotes():
    assert numbered_lines("a\r\nb\rc\n> d") == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]
    assert numbered_lines("> d\n", unquote=False) == [(1, "> d"), (2, "")]


def test_skip_mail_header_keeps_the_body_with_its_line_numbers():
    text = (
        "From dbench@example.org Mon Jan  5 10:00:00 2004\n"
        "Received: from mail.example.org\n"
        "\tby lists.example.org\n"  # a folded header line
        "Subject: dbench on 2.6.0\n"
        "\n"
        "Throughput 11 MB/sec\n"
    )
    assert skip_mail_header(numbered_lines(text)) == [
        (5, ""),
        (6, "Throughput 11 MB/sec"),
        (7, ""),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Throughput 11 MB/sec\nSubject: not a header here\n",  # no header at the start
        "Subject: dbench\nThroughput 11 MB/sec\n\nmore\n",  # a body line before the blank
        "",
    ],
)
def test_text_without_a_header_block_is_kept_whole(text):
    lines = numbered_lines(text)
    assert skip_mail_header(lines) == lines
