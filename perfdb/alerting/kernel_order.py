"""The kernel names a series hands the detector: a version as it is, a commit with its order.

A version (``6.8.0-rc3``, ``2.4.20``) says where it sorts; a commit or a linux-next tag does
not, and sorts by what uploads stated about it (its base, its describe; perfdb/kernels/versions.py),
which the database keeps as the kernel's ``sort_key``. The detector orders every series by
kernel, so such a kernel is passed ``with_order``: its name and that stored key. Without it
the robot's base commit and the commit tested on it would be ordered by their hashes.
"""

from __future__ import annotations

from collections.abc import Iterable

from perfdb.detector import with_order
from perfdb.kernels import KernelRef, KernelVersionError, parse_kernel
from perfdb.models import Kernel


def detector_names(kernels: Iterable[str]) -> dict[str, str]:
    """Each kernel's name for the detector, by its stored version text. One query, for the
    kernels named by git only (none for a series of versions)."""
    names = {text: text for text in kernels}
    refs = [text for text in names if "." not in text and _is_ref(text)]  # versions have dots
    if refs:
        for version, key in Kernel.objects.filter(version__in=refs).values_list(
            "version", "sort_key"
        ):
            names[version] = with_order(version, key)
    return names


def _is_ref(text: str) -> bool:
    try:
        return isinstance(parse_kernel(text), KernelRef)
    except KernelVersionError:
        return False
