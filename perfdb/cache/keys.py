"""Cache keys: every key a cached value is stored under is made by ``cache_key``, from the
kind of value and the parameters it depends on besides the data versions.

Keys written by hand in each module had drifted apart: a parameter's ``None`` and the text
``"None"`` made one key, a build named ``default`` met the key of a chart's default view,
and a list of setups entered one key as ``1|2`` and another as ``[1, 2]``. Made in one
place, two keys are equal exactly when their kind and parameters are
(``kind:name=value:name=value``):

- parameters are ordered by name: a caller's order does not matter;
- text is escaped (``%`` and the characters that delimit a value, ``: , [ { ~``, as
  ``%XX``): free text from a URL cannot end one parameter and start another, nor end a
  list early;
- an int is its decimal text: the setup ``3`` and a URL's ``"3"`` are one key;
- ``None`` is ``~``, distinct from ``""`` (empty) and from the text ``"~"`` (escaped);
- a list or tuple keeps its order, for what is drawn in that order: ``[a,b,]`` (each item
  ends with a comma: ``[]`` is no item, ``[,]`` one empty one);
- a set or frozenset is sorted, for what is the same whatever its order (the builds a
  chart shows, the setups whose metrics are merged): ``{a,b,}``.

A key may be a parameter of another (the view of a chart names the chart's key), escaped
like any text. The kind is a literal naming what is cached (``"scaling-view"``). Keys are
readable, not short: where one becomes a Redis key it is hashed (entries.py
``entry_name``). Nothing parses a key back. Called for every entry a request reads (a
scope's ~100 setups' pieces): text without a character to escape, nearly all of it, is
found so by one regular-expression search and used as it is.
"""

from __future__ import annotations

import re
from collections.abc import Set

Item = str | int | None
KeyValue = Item | tuple[Item, ...] | list[Item] | Set[Item]

_TO_ESCAPE = re.compile(r"[%:,\[{~]")


def cache_key(kind: str, /, **params: KeyValue) -> str:
    """The key of a value of ``kind`` computed from ``params`` (the module says how each is
    written): ``kind:name=value:...`` in the order of the names."""
    key = _escaped(kind)
    for name in sorted(params):
        key += f":{name}={_text(params[name])}"
    return key


def _text(value: KeyValue) -> str:
    if type(value) is str:  # the common case first, exactly (a subclass below)
        return _escaped(value)
    if type(value) is int:
        return str(value)
    if value is None:
        return "~"
    if isinstance(value, tuple | list):
        return "[" + "".join([_item(v) + "," for v in value]) + "]"
    if isinstance(value, Set):
        return "{" + "".join(sorted([_item(v) + "," for v in value])) + "}"
    return _item(value)  # a subclass of str or int, or refused there


def _item(value: Item) -> str:
    """One value, or one item of a list or set: text, an int or None (nothing nested)."""
    if isinstance(value, str):
        return _escaped(value)
    if isinstance(value, bool) or not isinstance(value, int | None):
        raise TypeError(f"a cache key's value is text, an int or None, not {value!r}")
    return "~" if value is None else str(value)


def _escaped(text: str) -> str:
    if _TO_ESCAPE.search(text) is None:
        return text
    return (
        text.replace("%", "%25")  # first: the escapes below add a % each
        .replace(":", "%3A")
        .replace(",", "%2C")
        .replace("[", "%5B")
        .replace("{", "%7B")
        .replace("~", "%7E")
    )
