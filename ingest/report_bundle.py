"""One report file uploaded as it is, without a manifest.

The kernel test robot's mails and mmtests' compare-kernels tables say what they are, which
builds they compare, on what machine and with which parameters. Writing a manifest for one
of them is an hour of copying what the text already states, so the server reads them as
they are: when an upload is not an archive, the text is offered to every parser that can
recognise its own format (``ingest.parsers.base.recognises``); the one that does reads it,
and a manifest is written from what it read (one ``[[runs_from]]`` block: the report's
builds become kernels, its machine the hardware, its parameters each run's params). From
there the upload is an ordinary bundle: the same preview, plan, checks and writer.

Nothing is guessed: a build label that is not a kernel name, or text no parser recognises,
is refused saying what was tried and how to upload it with a manifest instead.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from ingest.parsers import ParseError, get_parser
from ingest.parsers.base import ParseResult, group_records, normalize_key_value, recognisers
from perfdb.kernels import KernelVersionError, patch_tree_split

MANIFEST = "manifest.json"
# Today's labs that mail these reports run multi-processor machines; a manifest says
# otherwise for a UP run.
MODE = "SMP"


class ReportError(ValueError):
    """The text is no report this server reads as it is; the message says what was tried."""


def recognised(text: str) -> str:
    """The parser whose recogniser knows ``text``; ReportError naming the formats tried."""
    tried = sorted(recognisers().items())
    found = [name for name, recognise in tried if recognise(text)]
    if len(found) == 1:
        return found[0]
    names = ", ".join(name for name, _ in tried) or "none"
    if not found:
        raise ReportError(
            "not a .tar.gz or .zip archive, and not a report this server reads without a "
            f"manifest (tried: {names}); upload a bundle with a manifest (docs/bundle-format.md)"
        )
    raise ReportError(
        f"the text looks like several report formats ({', '.join(found)}); upload it in a "
        "bundle whose manifest names the parser (docs/bundle-format.md)"
    )


def report_manifest(parser: str, result: ParseResult, member: str, digest: str) -> str:
    """The manifest (JSON) that maps a parsed report to runs, one per build and parameters.

    Only what the report states: ``workload`` and ``hardware`` from its metadata (the
    parser's ``workload`` or the parser's name), each build label as the kernel it names. A
    report that names no machine gets one of its own, ``unstated-<digest>``: two such reports
    may come from two machines, and a series must never mix them. A label that is not a
    kernel name is refused naming its line.
    """
    meta = result.metadata
    workload = _text(meta, "workload") or parser
    hardware = _text(meta, "hardware") or f"unstated-{digest[:10]}"
    labels: dict[str, dict[str, object]] = {}
    for group in group_records(result.records):
        label = group.keys.get("label")
        if label is None:
            raise ReportError(
                f"line {group.line}: the {parser} report gives no build for "
                f"{group.describe()}; upload it in a bundle whose manifest names the kernel"
            )
        text = normalize_key_value(label)
        try:
            split = patch_tree_split(text)
        except KernelVersionError:
            raise ReportError(
                f"line {group.line}: the {parser} report names the build {str(label)!r}, "
                "which is not a kernel name; upload it in a bundle whose manifest maps it: "
                f'labels = {{ "{label}" = {{ kernel = "...", patches = [...] }} }}'
            ) from None
        kernel, patches = split if split is not None else (text, ())
        labels[text] = {"kernel": kernel, "patches": list(patches)}
    notes = _text(meta, "machine")
    machine: dict[str, object] = {"notes": notes} if notes else {}
    manifest = {
        "format": 2,
        "hardware": {hardware: machine},
        "runs_from": [
            {
                "path": member,
                "parser": parser,
                "workload": workload,
                "hardware": hardware,
                "mode": MODE,
                "labels": labels,
            }
        ],
    }
    return json.dumps(manifest, indent=2)


def report_files(data: bytes, member: str) -> tuple[str, str]:
    """(manifest name, manifest text) for a report uploaded as one file named ``member``;
    ReportError when the bytes are no report this server recognises or reads."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ReportError(
            f"not a .tar.gz or .zip archive, and not UTF-8 text either ({error})"
        ) from None
    parser = recognised(text)
    try:
        result = get_parser(parser)(text, {})
    except ParseError as error:
        raise ReportError(f"{member}: read as a {parser} report: {error}") from None
    digest = hashlib.sha256(data).hexdigest()
    return MANIFEST, report_manifest(parser, result, member, digest)


def _text(meta: Mapping[str, object], key: str) -> str:
    value = meta.get(key)
    return str(value).strip() if value is not None else ""
