"""Store what uploads state about kernels named by git, and keep every kernel's order right.

A commit (``6e553c6bcb``) or a linux-next tag (``next-20240521``) carries no order in its
name: it sorts by what is stated about it (``perfdb.kernels.ref_sort_key``, docs/kernels.md).
``kernels_state`` records those statements — from a manifest's ``[kernel."…"]`` tables
(ingest/keys.py) or from a module that reads them elsewhere, e.g. the kernel test robot's
report, which names a base commit and the commit tested on it:

    kernel_state(kernel="ec81deb6b7", facts=KernelFacts(subject="maple_tree: …"))
    kernel_state(kernel="6e553c6bcb", facts=KernelFacts(base="ec81deb6b7", subject="fork: …"))

A fact once stored never changes (a commit's describe, base, time and subject are the
commit's): a different one is refused, a missing one is filled in. Filling one in moves the
kernel, so the keys of the kernels based on it are computed again in the same transaction,
and every cached page is invalidated at commit.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.db import IntegrityError, transaction

from perfdb.cache import data_changed_on_commit
from perfdb.kernels import KernelFacts, KernelRef, KernelVersionError, parse_kernel, ref_sort_key
from perfdb.models import Kernel

__all__ = ["KernelFacts", "KernelFactsError", "kernel_state", "kernels_state"]


class KernelFactsError(ValueError):
    """Facts that cannot be stored: malformed, contradicting the stored ones, or a cycle."""


def kernel_state(*, kernel: str, facts: KernelFacts) -> Kernel:
    """Record ``facts`` about ``kernel`` (its base is created if unknown); the stored row."""
    return kernels_state({kernel: facts})[parse_kernel(kernel).text]


def kernels_state(statements: Mapping[str, KernelFacts]) -> dict[str, Kernel]:
    """Record each kernel's facts, bases before the kernels based on them (a chain may come
    in any order); the rows by kernel text. All or nothing: KernelFactsError names the
    kernel and the fact refused."""
    named: dict[str, tuple[KernelRef, KernelFacts]] = {}
    for written, facts in statements.items():
        try:
            name = facts.check(written)
        except KernelVersionError as error:
            raise KernelFactsError(f"kernel {written!r}: {error}") from None
        named[name.text] = (name, facts)
    done: dict[str, Kernel] = {}
    with transaction.atomic():
        for text in named:
            _state(text, named, done, ())
    return done


def _state(
    text: str,
    named: Mapping[str, tuple[KernelRef, KernelFacts]],
    done: dict[str, Kernel],
    path: tuple[str, ...],
) -> Kernel:
    """The row of ``text`` with its facts stored, its base's first."""
    if text in done:
        return done[text]
    if text in path:
        raise KernelFactsError(f"kernel {text}: based on itself through {' -> '.join(path)}")
    if text not in named:  # a base no statement is about: as stored, or created bare
        done[text] = _row(text)[0]
        return done[text]
    name, facts = named[text]
    base = None
    if facts.base:
        base = _state(parse_kernel(facts.base).text, named, done, (*path, text))
    done[text] = _stored(name, facts, base)
    return done[text]


def _row(text: str, **fields: object) -> tuple[Kernel, bool]:
    """The kernel's row, locked for this transaction, and whether it is new (then created
    with ``fields``); survives another upload creating it at the same moment."""
    row = Kernel.objects.select_for_update().filter(version=text).first()
    if row is not None:
        return row, False
    try:
        with transaction.atomic():  # a savepoint: a concurrent insert leaves ours intact
            return Kernel.objects.create(version=text, **fields), True
    except IntegrityError:
        return Kernel.objects.select_for_update().get(version=text), False


def _stored(name: KernelRef, facts: KernelFacts, base: Kernel | None) -> Kernel:
    """The row of ``name`` with ``facts`` stored: created with them, or the missing ones
    filled in (its key and those of the kernels based on it computed again)."""
    wanted: dict[str, object] = {
        "describe": facts.describe.strip(),
        "committed_at": facts.committed_at,
        "subject": facts.subject.strip(),
    }
    tree = facts.tree or name.tree
    try:
        row, created = _row(name.text, tree=tree, base=base, **wanted)
    except KernelVersionError as error:  # the key: a chain of bases too long
        raise KernelFactsError(f"kernel {name.text}: {error}") from None
    if created:
        return row
    wanted["base_id"] = None if base is None else base.pk
    differ = [
        f"{field.removesuffix('_id')} {_shown(value)} (stored: {_shown(getattr(row, field))})"
        for field, value in wanted.items()
        if value not in ("", None) and getattr(row, field) not in ("", None, value)
    ]
    if differ:
        raise KernelFactsError(
            f"kernel {name.text}: stated {', '.join(differ)}; a commit's facts never change"
        )
    new = {k: v for k, v in wanted.items() if v not in ("", None) and getattr(row, k) != v}
    if not row.tree and tree:  # where it was first seen: a commit is in many trees
        new["tree"] = tree
    if not new:
        return row
    if base is not None and "base_id" in new:
        _refuse_cycle(row, base)
        row.base = base
    for field, value in new.items():
        setattr(row, field, value)
    before = list(row.sort_key)
    try:
        row.save()  # computes its key; an edited row invalidates the caches at commit
    except KernelVersionError as error:
        raise KernelFactsError(f"kernel {name.text}: {error}") from None
    if row.sort_key != before:
        _rekey_based_on(row)
    return row


def _refuse_cycle(row: Kernel, base: Kernel) -> None:
    """Refuse ``base`` when ``row`` is among its bases (the key would have no end)."""
    node: Kernel | None = base
    seen = 0
    while node is not None and seen < 1000:
        if node.pk == row.pk:
            raise KernelFactsError(
                f"kernel {row.version}: based on {base.version}, which is based on it"
            )
        node = (
            None
            if node.base_id is None
            else Kernel.objects.only("pk", "base_id").get(pk=node.base_id)
        )
        seen += 1


def _rekey_based_on(root: Kernel) -> None:
    """The keys of the kernels based on ``root`` (and on them, …), computed again from its new
    one: a fact filled in later moves them with it."""
    keys = {root.pk: tuple(root.sort_key)}
    frontier = [root.pk]
    changed: list[Kernel] = []
    while frontier:
        moved = []
        for kernel in Kernel.objects.filter(base_id__in=frontier).order_by("pk"):
            name = parse_kernel(kernel.version)
            assert isinstance(name, KernelRef)  # only git-named kernels have a base
            try:
                key = ref_sort_key(
                    name,
                    describe=kernel.describe,
                    base_key=keys[kernel.base_id],  # type: ignore[index]  # filtered on it
                    committed_at=kernel.committed_at,
                )
            except KernelVersionError as error:
                raise KernelFactsError(f"kernel {kernel.version}: {error}") from None
            if list(key) != list(kernel.sort_key):
                kernel.sort_key = list(key)
                changed.append(kernel)
                keys[kernel.pk] = key
                moved.append(kernel.pk)
        frontier = moved
    if changed:
        Kernel.objects.bulk_update(changed, ["sort_key"], batch_size=1000)
        data_changed_on_commit()  # bulk_update sends no post_save


def _shown(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(Kernel.objects.only("version").get(pk=value).version)
    return repr(value.isoformat() if hasattr(value, "isoformat") else value)
