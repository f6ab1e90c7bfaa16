import gzip
import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from ingest.bundle import BundleError, BundleLimits, read_bundle

MANIFEST = b'format = 1\n[[run]]\nworkload = "VolanoMark"\n'
LOG = b"Average throughput = 13183 messages per second\n"


def write_tar(path: Path, members: dict[str, bytes], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as archive:
        for name, content in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    return path


def write_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return path


def add_tar_special(path: Path, info: tarfile.TarInfo) -> Path:
    """A gzipped tar with a manifest and one special (non-file) member."""
    with tarfile.open(path, "w:gz") as archive:
        manifest = tarfile.TarInfo("manifest.toml")
        manifest.size = len(MANIFEST)
        archive.addfile(manifest, io.BytesIO(MANIFEST))
        archive.addfile(info)
    return path


# --- good bundles -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("writer", "filename"),
    [
        (lambda p, m: write_tar(p, m, "w:gz"), "bundle.tar.gz"),
        (lambda p, m: write_tar(p, m, "w"), "bundle.tar"),
        (write_zip, "bundle.zip"),
        # Content decides, not the name: a zip called .tar.gz is still read as a zip.
        (write_zip, "misnamed.tar.gz"),
        (lambda p, m: write_tar(p, m, "w:gz"), "misnamed.zip"),
    ],
)
def test_reads_manifest_and_files_from_every_archive_kind(tmp_path, writer, filename):
    path = writer(
        tmp_path / filename,
        {"manifest.toml": MANIFEST, "volano/trial1.log": LOG, "prestat.txt": b""},
    )
    bundle = read_bundle(path)
    assert bundle.manifest_name == "manifest.toml"
    assert bundle.manifest_text == MANIFEST.decode()
    assert dict(bundle.files) == {"volano/trial1.log": LOG, "prestat.txt": b""}


@pytest.mark.parametrize("writer", [write_tar, write_zip])
def test_manifest_inside_a_single_top_level_folder(tmp_path, writer):
    path = writer(
        tmp_path / "bundle",
        {"run-42/manifest.json": b"{}", "run-42/./volano/trial1.log": LOG},
    )
    bundle = read_bundle(path)
    assert bundle.manifest_name == "manifest.json"
    assert dict(bundle.files) == {"volano/trial1.log": LOG}


def test_tar_made_from_inside_the_folder_with_dot_prefixes(tmp_path):
    """`tar czf b.tgz .` writes "./" and "./manifest.toml"."""
    path = tmp_path / "dot.tgz"
    with tarfile.open(path, "w:gz") as archive:
        folder = tarfile.TarInfo("./")
        folder.type = tarfile.DIRTYPE
        archive.addfile(folder)
        for name, content in (("./manifest.toml", MANIFEST), ("./volano/trial1.log", LOG)):
            info = tarfile.TarInfo(name)
            info.size = len(content)
            archive.addfile(info, io.BytesIO(content))
    bundle = read_bundle(path)
    assert bundle.manifest_text == MANIFEST.decode()
    assert dict(bundle.files) == {"volano/trial1.log": LOG}


def test_directory_entries_and_macos_metadata_are_ignored(tmp_path):
    path = tmp_path / "finder.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("run-42/", b"")
        archive.writestr("run-42/manifest.toml", MANIFEST)
        archive.writestr("__MACOSX/run-42/._manifest.toml", b"\x00\x05\x16\x07")
    bundle = read_bundle(path)
    assert bundle.manifest_text == MANIFEST.decode()
    assert dict(bundle.files) == {}


def test_manifest_with_byte_order_mark_is_decoded(tmp_path):
    path = write_zip(tmp_path / "b.zip", {"manifest.toml": b"\xef\xbb\xbf" + MANIFEST})
    assert read_bundle(path).manifest_text == MANIFEST.decode()


# --- hostile or broken bundles ----------------------------------------------------------------


def symlink(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.SYMTYPE
    info.linkname = target
    return info


def hardlink(name: str, target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.LNKTYPE
    info.linkname = target
    return info


def device(name: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    return info


@pytest.mark.parametrize(
    ("member", "message"),
    [
        (symlink("volano/trial1.log", "/etc/passwd"), "'volano/trial1.log' is a link"),
        (hardlink("prestat.txt", "manifest.toml"), "'prestat.txt' is a link"),
        (device("console", tarfile.CHRTYPE), "'console' is a device or fifo"),
        (device("disk", tarfile.BLKTYPE), "'disk' is a device or fifo"),
        (device("pipe", tarfile.FIFOTYPE), "'pipe' is a device or fifo"),
    ],
)
def test_special_tar_members_are_refused(tmp_path, member, message):
    path = add_tar_special(tmp_path / "b.tar.gz", member)
    with pytest.raises(BundleError, match=message):
        read_bundle(path)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("../x", "member '../x' has a '..' component"),
        ("volano/../../x", "has a '..' component"),
        ("/etc/passwd", "member '/etc/passwd' has an absolute path"),
        ("C:\\Windows\\x.log", "backslash or drive path"),
        ("C:x.log", "backslash or drive path"),
        ("volano\\..\\x", "backslash or drive path"),
    ],
)
@pytest.mark.parametrize("writer", [write_tar, write_zip])
def test_paths_that_escape_the_bundle_are_refused(tmp_path, writer, name, message):
    path = writer(tmp_path / "b", {"manifest.toml": MANIFEST, name: LOG})
    with pytest.raises(BundleError, match=message.replace("\\", "\\\\")):
        read_bundle(path)


def test_zip_symlink_is_refused(tmp_path):
    path = tmp_path / "link.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("manifest.toml", MANIFEST)
        info = zipfile.ZipInfo("volano/trial1.log")
        info.create_system = 3
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(info, "/etc/passwd")
    with pytest.raises(BundleError, match="'volano/trial1.log' is a link"):
        read_bundle(path)


def test_encrypted_zip_member_is_refused(tmp_path):
    path = write_zip(tmp_path / "enc.zip", {"manifest.toml": MANIFEST, "secret.log": LOG})
    data = bytearray(path.read_bytes())
    # Set the "encrypted" flag bit in every local and central header (zipfile cannot write one).
    for signature, flag_offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (start := data.find(signature, start)) != -1:
            data[start + flag_offset] |= 0x1
            start += 4
    path.write_bytes(bytes(data))
    with pytest.raises(BundleError, match="'manifest.toml' is encrypted"):
        read_bundle(path)


@pytest.mark.parametrize("writer", [write_tar, write_zip])
def test_duplicate_member_names_are_refused(tmp_path, writer):
    path = tmp_path / "dup"
    if writer is write_zip:
        with zipfile.ZipFile(path, "w") as archive, pytest.warns(UserWarning):
            archive.writestr("manifest.toml", MANIFEST)
            archive.writestr("a.log", LOG)
            archive.writestr("a.log", b"other")
    else:
        with tarfile.open(path, "w:gz") as archive:
            for name, content in (("manifest.toml", MANIFEST), ("a.log", LOG), ("./a.log", b"x")):
                info = tarfile.TarInfo(name)
                info.size = len(content)
                archive.addfile(info, io.BytesIO(content))
    with pytest.raises(BundleError, match="member 'a.log' appears twice"):
        read_bundle(path)


@pytest.mark.parametrize("writer", [write_tar, write_zip])
def test_too_many_members_are_refused(tmp_path, writer):
    members = {"manifest.toml": MANIFEST} | {f"trial{i}.log": LOG for i in range(10)}
    path = writer(tmp_path / "many", members)
    assert len(read_bundle(path, BundleLimits(max_members=11)).files) == 10
    with pytest.raises(BundleError, match="too many members"):
        read_bundle(path, BundleLimits(max_members=10))


@pytest.mark.parametrize("writer", [write_tar, write_zip])
def test_member_over_the_size_cap_is_refused(tmp_path, writer):
    path = writer(tmp_path / "big", {"manifest.toml": MANIFEST, "big.log": b"x" * 5000})
    limits = BundleLimits(max_member_bytes=4096)
    with pytest.raises(BundleError, match="member 'big.log' is larger than 4096 bytes"):
        read_bundle(path, limits)


@pytest.mark.parametrize("writer", [write_tar, write_zip])
def test_total_over_the_cap_is_refused(tmp_path, writer):
    members = {"manifest.toml": MANIFEST} | {f"t{i}.log": bytes(range(256)) * 8 for i in range(5)}
    path = writer(tmp_path / "total", members)
    with pytest.raises(BundleError, match="archive unpacks to more than 8000 bytes"):
        read_bundle(path, BundleLimits(max_total_bytes=8000))


@pytest.mark.parametrize("writer", [write_tar, write_zip])
def test_compression_bomb_is_stopped_by_the_ratio(tmp_path, writer):
    path = writer(tmp_path / "bomb", {"manifest.toml": MANIFEST, "zeros.log": bytes(50 << 20)})
    assert path.stat().st_size < 200_000  # 50 MB of zeros packs to a few tens of KB
    with pytest.raises(BundleError, match="compression ratio over 200:1.*'zeros.log'"):
        read_bundle(path)


def test_zip_whose_headers_understate_the_size_is_refused(tmp_path):
    """Headers claim 1 KB for a 1 MB member: no more than the claim is read, and the CRC of
    the cut-off data does not match, so the archive is refused instead of trusted."""
    path = write_zip(
        tmp_path / "liar.zip", {"manifest.toml": MANIFEST, "zeros.log": bytes(1 << 20)}
    )
    data = path.read_bytes()
    real = (1 << 20).to_bytes(4, "little")
    assert data.count(real) == 2  # uncompressed size in the local and the central header
    path.write_bytes(data.replace(real, (1024).to_bytes(4, "little")))
    with pytest.raises(BundleError, match="damaged or truncated: Bad CRC-32 for file 'zeros.log'"):
        read_bundle(path)


def test_zip_whose_headers_admit_an_oversized_member_is_refused_before_reading(tmp_path):
    path = write_zip(tmp_path / "big.zip", {"manifest.toml": MANIFEST, "zeros.log": bytes(100)})
    data = path.read_bytes()
    real = (100).to_bytes(4, "little") + b"\x09\x00"  # size, then the name length (9)
    assert data.count(real) == 2
    path.write_bytes(data.replace(real, (1 << 30).to_bytes(4, "little") + b"\x09\x00"))
    with pytest.raises(BundleError, match="member 'zeros.log' is larger than 268435456 bytes"):
        read_bundle(path)


def test_small_repetitive_archive_is_not_mistaken_for_a_bomb(tmp_path):
    path = write_tar(tmp_path / "ok.tgz", {"manifest.toml": MANIFEST, "z.log": bytes(512 * 1024)})
    assert path.stat().st_size * 200 < 512 * 1024  # the ratio alone would refuse it
    assert len(read_bundle(path).files["z.log"]) == 512 * 1024


def test_truncated_gzip_is_reported_as_damaged(tmp_path):
    path = write_tar(tmp_path / "cut.tar.gz", {"manifest.toml": MANIFEST, "a.log": LOG * 2000})
    path.write_bytes(path.read_bytes()[:-200])
    with pytest.raises(BundleError, match="the archive is damaged or truncated"):
        read_bundle(path)


def test_corrupt_zip_is_reported_as_damaged(tmp_path):
    path = write_zip(tmp_path / "cut.zip", {"manifest.toml": MANIFEST, "a.log": LOG * 2000})
    path.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(BundleError, match="the archive is damaged or truncated"):
        read_bundle(path)


def test_gzip_that_is_not_a_tar_is_reported_as_damaged(tmp_path):
    path = tmp_path / "log.gz"
    path.write_bytes(gzip.compress(b"just some text, not a tar archive\n" * 50))
    with pytest.raises(BundleError, match="damaged"):
        read_bundle(path)


@pytest.mark.parametrize(
    "content",
    [b"format = 1\n", b"BZh91AY&SY", b"", b"\xfd7zXZ\x00 an xz file"],
)
def test_other_files_are_not_archives(tmp_path, content):
    path = tmp_path / "bundle.tar.gz"
    path.write_bytes(content)
    with pytest.raises(BundleError, match=r"not a \.tar\.gz or \.zip archive"):
        read_bundle(path)


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ({"volano/trial1.log": LOG}, "no manifest"),
        ({"a/manifest.toml": MANIFEST, "b/x.log": LOG}, "no manifest"),
        ({"a/b/manifest.toml": MANIFEST}, "no manifest"),
        (
            {"manifest.toml": MANIFEST, "manifest.json": b"{}"},
            "both manifest.toml and manifest.json are present",
        ),
        (
            {"run/manifest.toml": MANIFEST, "run/manifest.json": b"{}"},
            "both run/manifest.toml and run/manifest.json are present",
        ),
        ({"manifest.toml": b"format = \xff\n"}, "manifest.toml is not UTF-8"),
    ],
)
def test_manifest_must_be_found_exactly_once(tmp_path, members, message):
    path = write_zip(tmp_path / "m.zip", members)
    with pytest.raises(BundleError, match=message):
        read_bundle(path)
