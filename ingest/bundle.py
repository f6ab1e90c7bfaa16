"""Read an uploaded result bundle (.tar.gz, .tgz, .tar or .zip) safely into memory, then
parse it into the runs it will create: an ingest's reading, all of it outside any transaction.

An upload is untrusted: it may hold links, paths that climb out of a folder, devices, or a
compression bomb whose headers lie about sizes. So members are streamed one at a time and their
bytes are counted as they are decompressed; reading stops the moment a cap is crossed. No
member is ever written to disk. See docs/bundle-format.md ("Safety limits").

``read_stored_bundle`` reads an upload's stored file where it is: on local disk, or through a
temporary copy of the archive when bundles live in shared storage without local paths (S3
through django-storages: a worker on another host reads what the web server stored;
docs/deploy.md).

``bundle_parse`` takes the bundle read: its manifest checked (ingest/manifest/), every file
it names parsed (ingest/parsers/), its runs planned and every text measured against its
column (ingest/plan.py). Nothing is stored; the upload preview calls it too.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ingest.manifest import Manifest, parse_manifest
from ingest.parsers import ParseError, ParseResult, get_parser
from ingest.plan import PlannedRun, file_key, plan_runs
from ingest.report_bundle import ReportError, report_files
from perfdb.operations.gc_pause import collector_paused

if TYPE_CHECKING:
    from django.db.models.fields.files import FieldFile

MANIFEST_NAMES = ("manifest.toml", "manifest.json")
_CHUNK = 64 * 1024
_DRIVE = re.compile(r"^[A-Za-z]:")
# Folders archivers add on their own (macOS Finder zips); never part of a bundle.
_IGNORED_TOP = {"__MACOSX"}


class BundleError(ValueError):
    """The archive is refused; the message says what is wrong and, when known, which member."""


@dataclass(frozen=True)
class BundleLimits:
    max_members: int = 2000
    max_member_bytes: int = 256 * 1024 * 1024
    max_total_bytes: int = 1024 * 1024 * 1024
    max_ratio: float = 200.0  # unpacked / compressed (the archive file's size)
    # Below this many unpacked bytes the ratio is not checked: a small archive cannot be a
    # bomb, and a few KB of repetitive log text can legitimately compress very well.
    ratio_floor_bytes: int = 1024 * 1024


@dataclass(frozen=True)
class Bundle:
    manifest_name: str  # "manifest.toml" or "manifest.json" (path inside the root)
    manifest_text: str
    files: Mapping[str, bytes]  # path relative to the manifest's folder -> content (no manifest)


def read_bundle(path: Path, limits: BundleLimits = BundleLimits()) -> Bundle:
    """Read the archive at ``path``; raise BundleError for anything unsafe or malformed."""
    path = Path(path)
    kind = _detect_kind(path)
    if kind == "text":
        return _report_bundle(path, limits)
    counter = _Counter(limits, compressed_bytes=max(os.path.getsize(path), 1))
    try:
        members = _read_zip(path, counter) if kind == "zip" else _read_tar(path, counter)
    except BundleError:
        raise
    except (tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError, OSError) as error:
        raise BundleError(f"the archive is damaged or truncated: {error}") from error
    return _locate_manifest(members)


def read_stored_bundle(stored: FieldFile, limits: BundleLimits = BundleLimits()) -> Bundle:
    """Read an upload's stored bundle (local disk, or a copy from shared storage)."""
    with _local_path(stored) as path:
        return read_bundle(path, limits)


@contextmanager
def _local_path(stored: FieldFile) -> Iterator[Path]:
    """A local path to the stored archive for as long as the block runs."""
    try:
        local = stored.path
    except NotImplementedError:  # remote storage: no path on this host
        local = None
    if local is not None:
        yield Path(local)
        return
    suffix = "".join(Path(stored.name or "bundle").suffixes)[-16:]
    with tempfile.NamedTemporaryFile(prefix="perfdb-bundle-", suffix=suffix) as copy:
        with stored.open("rb") as source:
            shutil.copyfileobj(source, copy, 1 << 20)
        copy.flush()
        yield Path(copy.name)


def _detect_kind(path: Path) -> str:
    """Tell tar, gzip and zip apart by their magic bytes; a file name proves nothing."""
    with open(path, "rb") as handle:
        head = handle.read(265)
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if head[257:262] == b"ustar":
        return "tar"
    return "text"  # maybe one report uploaded as it is (ingest/report_bundle.py)


def _report_bundle(path: Path, limits: BundleLimits) -> Bundle:
    """A report file uploaded without a manifest, as a bundle of that file and the manifest
    its text implies; BundleError saying what was tried when it is no such report."""
    size = os.path.getsize(path)
    if size > limits.max_member_bytes:
        raise BundleError(
            f"not a .tar.gz or .zip archive, and {size} bytes is too large for one report "
            f"(at most {limits.max_member_bytes})"
        )
    data = path.read_bytes()
    member = _safe_name(path.name) or "report.txt"
    try:
        manifest_name, manifest_text = report_files(data, member)
    except ReportError as error:
        raise BundleError(str(error)) from None
    return Bundle(manifest_name=manifest_name, manifest_text=manifest_text, files={member: data})


class _Counter:
    """Counts members and unpacked bytes against the limits, failing at the first crossing."""

    def __init__(self, limits: BundleLimits, compressed_bytes: int):
        self.limits = limits
        self.compressed_bytes = compressed_bytes
        self.members = 0
        self.total = 0

    def add_member(self, name: str) -> None:
        self.members += 1
        if self.members > self.limits.max_members:
            raise BundleError(
                f"too many members: more than {self.limits.max_members} (at member {name!r})"
            )

    def check_declared_size(self, name: str, size: int) -> None:
        """Refuse early when a header already admits an oversized member."""
        if size > self.limits.max_member_bytes:
            raise BundleError(self._member_too_big(name))

    def read(self, name: str, stream: IO[bytes]) -> bytes:
        chunks = []
        member_bytes = 0
        while chunk := stream.read(_CHUNK):
            member_bytes += len(chunk)
            self.total += len(chunk)
            if member_bytes > self.limits.max_member_bytes:
                raise BundleError(self._member_too_big(name))
            if self.total > self.limits.max_total_bytes:
                raise BundleError(
                    f"archive unpacks to more than {self.limits.max_total_bytes} bytes "
                    f"(at member {name!r})"
                )
            if (
                self.total > self.limits.ratio_floor_bytes
                and self.total > self.limits.max_ratio * self.compressed_bytes
            ):
                raise BundleError(
                    f"compression ratio over {self.limits.max_ratio:g}:1 "
                    f"(a compression bomb?) at member {name!r}"
                )
            chunks.append(chunk)
        return b"".join(chunks)

    def _member_too_big(self, name: str) -> str:
        return f"member {name!r} is larger than {self.limits.max_member_bytes} bytes"


def _read_tar(path: Path, counter: _Counter) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    # "r|*" streams: one member at a time, no seeking, no index of the whole archive.
    with tarfile.open(path, mode="r|*") as archive:
        for member in _iter_tar(archive):
            counter.add_member(member.name)
            name = _safe_name(member.name)
            if member.isdir():
                continue
            _check_tar_type(member)
            if name is None:
                continue
            _check_new(name, members)
            counter.check_declared_size(member.name, member.size)
            stream = archive.extractfile(member)
            if stream is None:  # pragma: no cover - regular files always have a stream
                raise BundleError(f"member {member.name!r} cannot be read")
            members[name] = counter.read(member.name, stream)
    return members


def _iter_tar(archive: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    while (member := archive.next()) is not None:
        yield member


def _check_tar_type(member: tarfile.TarInfo) -> None:
    if member.issym() or member.islnk():
        raise BundleError(f"member {member.name!r} is a link; links are not allowed")
    if member.ischr() or member.isblk() or member.isfifo():
        raise BundleError(f"member {member.name!r} is a device or fifo; only files are allowed")
    if not member.isreg():
        raise BundleError(f"member {member.name!r} is not a regular file")


def _read_zip(path: Path, counter: _Counter) -> dict[str, bytes]:
    members: dict[str, bytes] = {}
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        if len(infos) > counter.limits.max_members:
            raise BundleError(
                f"too many members: {len(infos)} (at most {counter.limits.max_members})"
            )
        for info in infos:
            counter.add_member(info.filename)
            name = _safe_name(info.filename)
            if info.is_dir():
                continue
            _check_zip_type(info)
            if name is None:
                continue
            _check_new(name, members)
            counter.check_declared_size(info.filename, info.file_size)
            with archive.open(info) as stream:
                members[name] = counter.read(info.filename, stream)
    return members


def _check_zip_type(info: zipfile.ZipInfo) -> None:
    if info.flag_bits & 0x1:
        raise BundleError(f"member {info.filename!r} is encrypted; encrypted zips are refused")
    # Unix file type bits, when the archiver recorded them (0 means "a plain file").
    kind = stat.S_IFMT(info.external_attr >> 16) if info.create_system == 3 else 0
    if stat.S_ISLNK(kind):
        raise BundleError(f"member {info.filename!r} is a link; links are not allowed")
    if kind and not stat.S_ISREG(kind):
        raise BundleError(f"member {info.filename!r} is not a regular file")


def _safe_name(raw: str) -> str | None:
    """Return the member's normalized relative path, or None for an ignored member.

    Refuses anything that could point outside the bundle once someone extracts it.
    """
    if "\\" in raw or _DRIVE.match(raw):
        raise BundleError(f"member {raw!r} has a backslash or drive path; use relative / paths")
    if raw.startswith("/"):
        raise BundleError(f"member {raw!r} has an absolute path")
    parts = [part for part in raw.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise BundleError(f"member {raw!r} has a '..' component")
    if "\x00" in raw:
        raise BundleError(f"member {raw!r} has a NUL byte in its name")
    if not parts or parts[0] in _IGNORED_TOP:
        return None
    return "/".join(parts)


def _check_new(name: str, members: Mapping[str, bytes]) -> None:
    if name in members:
        raise BundleError(f"member {name!r} appears twice in the archive")


def _locate_manifest(members: dict[str, bytes]) -> Bundle:
    """Find the manifest at the top, or at the top of a single top-level folder."""
    root = ""
    if not any(name in members for name in MANIFEST_NAMES):
        tops = {name.split("/", 1)[0] for name in members}
        folder = next(iter(tops)) if len(tops) == 1 else None
        if folder is None or not any(f"{folder}/{name}" in members for name in MANIFEST_NAMES):
            raise BundleError(
                "no manifest: expected manifest.toml or manifest.json at the top of the archive "
                "or inside a single top-level folder"
            )
        root = folder + "/"
    found = [name for name in MANIFEST_NAMES if root + name in members]
    if len(found) > 1:
        raise BundleError(
            f"both {root}manifest.toml and {root}manifest.json are present; keep only one"
        )
    manifest_name = found[0]
    raw = members[root + manifest_name]
    try:
        manifest_text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise BundleError(f"{root}{manifest_name} is not UTF-8 text: {error}") from error
    files = {
        name[len(root) :]: content
        for name, content in members.items()
        if name.startswith(root) and name != root + manifest_name
    }
    return Bundle(manifest_name=manifest_name, manifest_text=manifest_text, files=files)


# --- the bundle parsed ---------------------------------------------------------------------------


class IngestInternalError(Exception):
    """A bug met while reading one file (its parser raised something unexpected)."""


def _decode(data: bytes, path: str, warnings: list[str]) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        warnings.append(f"{path}: not UTF-8; read as Latin-1")
        return data.decode("latin-1")


def _wanted_files(manifest: Manifest) -> dict[str, tuple[str, str, Mapping[str, object], str]]:
    """Each distinct (file, parser, options) of the manifest, with who reads it first."""
    wanted: dict[str, tuple[str, str, Mapping[str, object], str]] = {}
    for run in manifest.runs:
        for file in run.files:
            key = file_key(file.path, file.parser, file.options)
            wanted.setdefault(key, (file.path, file.parser, file.options, f"run {run.index}"))
    for block in manifest.runs_from:
        for path in block.paths:
            key = file_key(path, block.parser, block.options)
            wanted.setdefault(key, (path, block.parser, block.options, block.where))
    return wanted


def bundle_parse(
    bundle: Bundle, progress: Callable[[int, int], None] | None = None
) -> tuple[Manifest, list[PlannedRun], list[str]]:
    """Validate the manifest, run every named parser, plan the runs. Pure: no database.

    Every file is parsed even after one fails, so the uploader learns the fate of all files
    from one upload: the error lists each file's problem on its own line.
    """
    manifest = parse_manifest(
        bundle.manifest_text, filename=bundle.manifest_name, available_files=bundle.files.keys()
    )
    wanted = _wanted_files(manifest)
    parsed: dict[str, ParseResult] = {}
    warnings: list[str] = []
    problems: list[str] = []
    for done, (key, (path, parser, options, who)) in enumerate(wanted.items(), start=1):
        text = _decode(bundle.files[path], path, warnings)
        try:
            with collector_paused():
                result = get_parser(parser)(text, options)
        except ParseError as exc:
            where = f"line {exc.line}: " if exc.line else ""
            problems.append(f"{who}: file {path!r} ({parser}): {where}{exc.message}")
            continue
        except Exception as exc:  # a parser bug: the upload names the file and the parser
            raise IngestInternalError(f"reading file {path!r} with the {parser} parser") from exc
        parsed[key] = result
        warnings.extend(f"{path}: {w}" for w in result.warnings)
        if progress:
            progress(done, len(wanted))
    if problems:
        raise ParseError("\n".join(problems))
    plan = plan_runs(manifest, parsed)  # and every text measured against its column
    return manifest, plan, sorted(set(warnings), key=warnings.index)
