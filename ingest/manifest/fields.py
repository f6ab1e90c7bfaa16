"""Typed field readers for manifests: each converts one value or says what was expected.

A reader never stops at the first problem: :class:`Fields` records each wrong field (prefixed
by where it is) and goes on, so an uploader sees every problem of a manifest at once.
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Callable, Collection, Mapping
from typing import Any

from perfdb.kernels import KernelRef, KernelVersionError, parse_kernel, patch_tree_split

Scalar = str | int | float | bool
BETTER = ("higher", "lower", "none")


# --- field conversion -------------------------------------------------------------------------


class Invalid(Exception):
    """A field's value is wrong; the message says what was expected and what was found."""


def show(value: object) -> str:
    """Render a value the way the manifest author wrote it (JSON-ish: "smp2", true, [1, 2])."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        return repr(value)


def string(value: object) -> str:
    if not isinstance(value, str):
        raise Invalid(f"expected a string, got {show(value)}")
    return value


def stripped(value: object) -> str:
    return string(value).strip()


def name(value: object) -> str:
    text = stripped(value)
    if not text:
        raise Invalid("must not be empty")
    return text


def positive_int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise Invalid(f"expected an integer ≥ 1, got {show(value)}")
    return value


def boolean(value: object) -> bool:
    if not isinstance(value, bool):
        raise Invalid(f"expected true or false, got {show(value)}")
    return value


def name_list(value: object) -> tuple[str, ...]:
    """A list of non-empty, distinct strings (patches, tiers)."""
    if not isinstance(value, list):
        raise Invalid(f"expected a list of strings, got {show(value)}")
    names = []
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise Invalid(f"expected non-empty strings, got {show(item)}")
        if item.strip() in names:
            raise Invalid(f"{item.strip()!r} is listed twice")
        names.append(item.strip())
    return tuple(names)


def mode(value: object) -> str:
    if not isinstance(value, str) or value.strip().upper() not in ("UP", "SMP"):
        raise Invalid(f'expected "UP" or "SMP", got {show(value)}')
    return value.strip().upper()


def better(value: object) -> str:
    if value not in BETTER:
        raise Invalid(f'expected "higher", "lower" or "none", got {show(value)}')
    return str(value)


def kernel(value: object) -> str:
    """A kernel version, git commit or linux-next tag; a patch tree in the suffix
    (``2.6.0-mm1``) is refused with the one canonical spelling, ``kernel = "2.6.0", patches =
    ["mm1"]`` (docs/kernels.md), and so is a commit's tree written into its name: what is
    stated about a commit goes in its ``[kernel."…"]`` table, once per bundle."""
    try:
        name = parse_kernel(value)  # type: ignore[arg-type]  # it checks the type itself
    except KernelVersionError as error:
        raise Invalid(str(error)) from None
    text = name.text
    if isinstance(name, KernelRef) and name.tree:
        raise Invalid(
            f"write kernel = {json.dumps(text)} and its tree in the bundle's "
            f"[kernel.{json.dumps(text)}] table: tree = {json.dumps(name.tree)}"
        )
    split = patch_tree_split(text)
    if split is not None:
        base, patches = split
        listed = ", ".join(json.dumps(p) for p in patches)
        raise Invalid(
            f"{json.dumps(text)} is kernel {base} with the {patches[0]} patch set: write "
            f"kernel = {json.dumps(base)}, patches = [{listed}] (then any other patches), so "
            f"the build is compared with {base} stock (docs/kernels.md)"
        )
    return text


def table(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Invalid(f"expected a table, got {show(value)}")
    return value


def number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Invalid(f"expected a number, got {show(value)}")
    if not math.isfinite(value):
        raise Invalid(f"expected a finite number, got {show(value)}")
    return float(value)


def metric_values(value: object) -> tuple[float, ...]:
    if isinstance(value, list):
        if not value:
            raise Invalid("expected a number or a non-empty list of numbers, got []")
        return tuple(number(item) for item in value)
    return (number(value),)


def param(value: object) -> Scalar:
    if isinstance(value, float) and not math.isfinite(value):
        raise Invalid(f"expected a finite number, got {show(value)}")
    if not isinstance(value, str | int | float):  # bool is an int
        raise Invalid(f"expected a string, integer, float or boolean, got {show(value)}")
    return value


def normalize_path(path: str) -> str:
    return "/".join(part for part in path.split("/") if part not in ("", "."))


def relative_path(value: object) -> str:
    text = string(value)
    parts = [part for part in text.split("/") if part not in ("", ".")]
    if text.startswith("/") or "\\" in text or ".." in parts or not parts:
        raise Invalid(f"expected a relative path inside the bundle, got {show(value)}")
    return "/".join(parts)


# --- tables -----------------------------------------------------------------------------------


class Fields:
    """Reads typed fields from one table, recording a problem (prefixed by ``where``) for each
    wrong one and returning None for it, so reading goes on and every problem is found."""

    def __init__(self, data: Mapping[str, Any], where: str, problems: list[str]):
        self.data = data
        self.where = where
        self.problems = problems
        self.count = 0  # problems recorded through this reader

    def problem(self, message: str) -> None:
        self.count += 1
        self.problems.append(f"{self.where}: {message}" if self.where else message)

    def check_keys(self, known: Collection[str], what: str = "field") -> None:
        for key in self.data:
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                self.problem(f"unknown {what} {key!r}{hint}; known: {', '.join(known)}")

    def get(
        self, key: str, convert: Callable[[object], Any], default: Any = None, *, required=False
    ) -> Any:
        if key not in self.data:
            if required:
                self.problem(f"field {key!r} is missing")
            return default
        try:
            return convert(self.data[key])
        except Invalid as error:
            self.problem(f"field {key!r}: {error}")
            return None

    def sub(self, key: str, where: str) -> Fields | None:
        """A reader for a nested table; None (problem recorded) when it is not a table."""
        value = self.get(key, table, {})
        return None if value is None else Fields(value, where, self.problems)


def list_of_tables(value: object) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise Invalid(f"expected a list of tables, got {show(value)}")
    return value
