"""Kernel identity: what a kernel name means and where it sorts.

A kernel is named by a version string (``2.5.59-mm1``, ``6.8.0-rc3+``) or by git (a commit,
a linux-next tag). ``versions`` parses and orders those names the way kernel people read
them, pure and shared by the detector, the writer and the pages; this package's own names
are its public face. ``commits`` stores what uploads state about kernels named by git and
keeps every kernel's stored order right; ``functions`` knows which kernel functions are the
scheduler and idle in each kernel era. docs/kernels.md has the rules.
"""

from perfdb.kernels.versions import (
    KernelFacts,
    KernelRef,
    KernelVersion,
    KernelVersionError,
    describe_version,
    kernel_label,
    kernel_sort_key,
    parse_kernel,
    patch_tree_split,
    ref_sort_key,
    sort_kernels,
)

__all__ = [
    "KernelFacts",
    "KernelRef",
    "KernelVersion",
    "KernelVersionError",
    "describe_version",
    "kernel_label",
    "kernel_sort_key",
    "parse_kernel",
    "patch_tree_split",
    "ref_sort_key",
    "sort_kernels",
]
