"""Text that becomes a header line (an email subject, a download file name).

Stored names come from uploaded bundles: a workload name or a file path may hold CR/LF or
other control characters, which a header must not carry (Django refuses them with
BadHeaderError, and a raw CR/LF would start a new header). One place cleans them.
"""

from __future__ import annotations

import re

from django.utils.http import content_disposition_header

# C0 and C1 controls, DEL, and the Unicode line/paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def header_text(text: str, max_length: int = 300) -> str:
    """One line of printable text: every run of control characters becomes one space."""
    return _CONTROL.sub(" ", text).strip()[:max_length]


def attachment_header(path: str, default: str = "download.txt") -> str:
    """A Content-Disposition value for a download of ``path``'s last component.

    Quotes, backslashes and control characters are dropped; non-ASCII names are sent as
    RFC 5987 ``filename*`` (Django's helper), so the header is always one valid line.
    """
    name = header_text(path.replace("\\", "/").rsplit("/", 1)[-1], 200)
    name = name.replace('"', "").replace(";", "_").strip(". ") or default
    return content_disposition_header(True, name) or f'attachment; filename="{default}"'
