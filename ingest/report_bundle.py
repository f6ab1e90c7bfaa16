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
import re
from collections.abc import Mapping

from ingest.parsers import ParseError, get_parser
from ingest.parsers.base import ParseResult, group_records, normalize_key_value, recognisers
from perfdb.kernels import KernelVersionError, parse_kernel, patch_tree_split

MANIFEST = "manifest.json"
# Today's labs that mail these reports run multi-processor machines; a manifest says
# otherwise for a UP run.
MODE = "SMP"
# A commit as a report prints it, abbreviated to its column (16, 27 or 40 hex digits): kept
# as its first 12, as `git log --abbrev=12` writes it, so one commit is one kernel whichever
# report names it.
_COMMIT = re.compile(r"^[0-9a-fA-F]{12,40}$")
_ABBREV = 12
_TAG = re.compile(r"^v(\d+\.\d+.*)$")  # a release tag as a column: v5.7 is kernel 5.7


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
            split = _build(text)
        except KernelVersionError:
            raise ReportError(
                f"line {group.line}: the {parser} report names the build {str(label)!r}, "
                "which is not a kernel name; upload it in a bundle whose manifest maps it: "
                f'labels = {{ "{label}" = {{ kernel = "...", patches = [...] }} }}'
            ) from None
        kernel, patches = split
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
    kernels = _commit_facts(meta, {str(b["kernel"]) for b in labels.values()})
    if kernels:
        manifest["kernel"] = kernels
    return json.dumps(manifest, indent=2)


def _build(label: str) -> tuple[str, tuple[str, ...]]:
    """The kernel and patches a report's build label names; KernelVersionError if none."""
    if _COMMIT.match(label):
        return label[:_ABBREV].lower(), ()
    tag = _TAG.match(label)
    text = tag.group(1) if tag else label
    split = patch_tree_split(text)
    return split if split is not None else (parse_kernel(text).text, ())


def _commit_facts(meta: Mapping[str, object], kernels: set[str]) -> dict[str, dict[str, str]]:
    """What the report states about its commits, as ``[kernel."…"]`` tables: each commit's
    subject, and that the tested ``commit`` is based on the ``base_commit`` (the robot's
    base column), so the base sorts first. Only commits that are builds of the report."""

    def short(sha: object) -> str:
        text = str(sha or "").strip()
        return text[:_ABBREV].lower() if _COMMIT.match(text) else ""

    facts: dict[str, dict[str, str]] = {}
    for key, subject in meta.items():
        if key.startswith("commit_subject:") and short(key.partition(":")[2]) in kernels:
            facts.setdefault(short(key.partition(":")[2]), {})["subject"] = str(subject)
    tested, base = short(meta.get("commit")), short(meta.get("base_commit"))
    if tested in kernels and base in kernels and tested != base:
        facts.setdefault(tested, {})["base"] = base
    return facts


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
