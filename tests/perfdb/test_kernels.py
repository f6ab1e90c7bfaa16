import random

import pytest

from perfdb.kernels import KernelVersionError, parse_kernel, sort_kernels

# Every version string the seed documents use, in the order a kernel engineer reads them.
SEED_ORDER = [
    "2.0.36",
    "2.2.7",
    "2.2.12-20",
    "2.2.23",
    "2.3",  # "2.3 development kernels", series without a patch level sorts last in it
    "2.3.28",
    "2.3.99-pre3",
    "2.3.99-pre3-elsc",
    "2.4.0",
    "2.4.17",
    "2.4.20",
    "2.4.20-distro",
    "2.4-distro",
    "2.4-x",
    "2.5.1",
    "2.5.25",
    "2.5.28",
    "2.5.33",
    "2.5.36",
    "2.5.38",
    "2.5.40",
    "2.5.59",
    "2.5.59-D7",
    "2.5.63",
    "2.5.65",
    "2.5.66",
    "2.6.0-test11",
    "2.6.0",
]


def test_seed_versions_sort_as_kernel_people_read_them():
    shuffled = SEED_ORDER[:]
    random.Random(4).shuffle(shuffled)
    got = sort_kernels(shuffled)
    # "2.3" as a bare series sorts after all its numbered releases
    expected = [v for v in SEED_ORDER if v != "2.3"]
    expected.insert(expected.index("2.3.99-pre3-elsc") + 1, "2.3")
    assert got == expected


def test_issue_chain():
    chain = [
        "2.2.12-20",
        "2.2.23",
        "2.3.28",
        "2.3.99-pre3",
        "2.4.0",
        "2.4.17",
        "2.4.20",
        "2.5.25",
        "2.5.59",
        "2.5.66",
    ]
    assert sort_kernels(list(reversed(chain))) == chain


@pytest.mark.parametrize(
    ("lower", "higher"),
    [
        ("2.4.20-pre11", "2.4.20-rc1"),
        ("2.4.20-rc1", "2.4.20"),
        ("2.6.0-test11", "2.6.0-rc1"),
        ("2.5.67-mm1", "2.5.67-mm10"),
        ("2.2.12-20", "2.2.12-mm1"),
        ("2.4.20", "2.4.20-distro"),
        ("2.4.99", "2.4-distro"),
        ("2.4-distro", "2.5.0"),
        ("2.3.99-pre3-elsc", "2.3.99-pre4"),
        ("2.6.9", "2.6.10"),
    ],
)
def test_pairs(lower, higher):
    assert parse_kernel(lower).sort_key < parse_kernel(higher).sort_key


@pytest.mark.parametrize(
    ("text", "base", "suffix"),
    [
        ("2.2.12-20", "2.2.12", "20"),
        ("2.3.99-pre3-elsc", "2.3.99-pre3", "elsc"),
        ("2.4-distro", "2.4", "distro"),
        ("2.5.59", "2.5.59", ""),
    ],
)
def test_base_and_suffix(text, base, suffix):
    version = parse_kernel(text)
    assert version.base == base
    assert version.suffix == suffix


def test_stock_is_the_plain_kernel():
    assert parse_kernel("2.4.20-stock").text == "2.4.20"
    assert parse_kernel(" 2.5.66-stock ").text == "2.5.66"


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "linux",
        "2",
        "2.",
        "2.x",
        "2..4",
        "v2.4.20",
        "2.4.20 ; drop table",
        "2.4.20-",
        "2.4.20--x",
        None,
        2.4,
    ],
)
def test_garbage_is_rejected_with_a_clear_error(garbage):
    with pytest.raises(KernelVersionError) as err:
        parse_kernel(garbage)
    assert "kernel version" in str(err.value)
