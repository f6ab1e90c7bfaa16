"""Reading a page's selection from its query string, and the choices the pickers offer.

Pure (no ORM): the views pass in the choice lists the selectors returned. A bad value raises
``BadParam`` naming the parameter; nothing here may let a malformed URL become a 500.

This is the one reader of request parameters, for pages and the API alike: a page's
``BadParam`` becomes an escaped HTML 400 (``config.middleware.BadParamMiddleware``), an API
view's a JSON 400 ``{"error", "param"}`` (``dashboards.api.errors.exception_handler``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

MAX_IDS = 50
# The value of a subset parameter that asks for every choice (``subset_param``).
ALL = "all"
MAX_TEXT = 200
# Parameters the papers chart against; preferred as the default x axis.
USUAL_X = ("rooms", "threads", "clients", "users", "users_per_room", "connections", "messages")


class BadParam(ValueError):
    def __init__(self, name: str, message: str):
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message


def is_number(text: str) -> bool:
    """ASCII digits only: ``str.isdigit()`` also accepts '²' and '٣', which ``int()`` refuses
    or reads as another number."""
    return text.isascii() and text.isdigit() and len(text) <= 18


def int_param(query: Mapping[str, Any], name: str) -> int | None:
    raw = _one(query, name).strip()
    if not raw:
        return None
    if not is_number(raw):
        raise BadParam(name, f"expected a positive whole number, got {raw[:40]!r}")
    return int(raw)


def ids_param(query: Mapping[str, Any], name: str, what: str = "run") -> list[int]:
    """Ids as ``1,2,3`` or as the parameter repeated (a multi-select), order kept."""
    parts = [p.strip() for raw in _many(query, name) for p in raw.split(",") if p.strip()]
    for part in parts:
        if not is_number(part):
            raise BadParam(name, f"expected {what} ids like 12,15, got {part[:40]!r}")
    ids = list(dict.fromkeys(int(p) for p in parts))
    if len(ids) > MAX_IDS:
        raise BadParam(name, f"at most {MAX_IDS} {what}s, got {len(ids)}")
    return ids


def text_param(query: Mapping[str, Any], name: str, max_length: int = MAX_TEXT) -> str | None:
    """A free-text filter (a workload or kernel name): at most ``max_length`` characters and
    no NUL, which PostgreSQL refuses (a 500 before). Surrounding blanks are dropped, after
    the length is checked: the schema's maxLength counts them."""
    given = _one(query, name)
    if len(given) > max_length:
        raise BadParam(name, f"at most {max_length} characters, got {len(given)}")
    raw = given.strip()
    if raw == "":
        return None
    if "\x00" in raw:
        raise BadParam(name, "a NUL character is not allowed")
    return raw


def _one(query: Mapping[str, Any], name: str) -> str:
    value = query.get(name, "")
    return value if isinstance(value, str) else str(value)


def _many(query: Mapping[str, Any], name: str) -> list[str]:
    getlist = getattr(query, "getlist", None)
    if getlist is not None:
        return [str(v) for v in getlist(name)]
    value = query.get(name)
    return [] if value is None else [str(value)]


def choice_param(query: Mapping[str, Any], name: str, choices: Sequence[str], default: str) -> str:
    raw = _one(query, name)
    if raw == "":
        return default
    if raw not in choices:
        allowed = ", ".join(repr(c) for c in choices) or "none available"
        raise BadParam(name, f"{raw[:60]!r} is not one of {allowed}")
    return raw


def strict_choice_param(query: Mapping[str, Any], name: str, choices: Sequence[str]) -> str | None:
    """For the API: None when ``name`` is absent; present, it must be one of ``choices``
    (an empty value is refused, as the schema's enum says)."""
    if name not in query:
        return None
    raw = _one(query, name)
    if raw not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise BadParam(name, f"{raw[:60]!r} is not one of {allowed}")
    return raw


def choices_param(
    query: Mapping[str, Any], name: str, choices: Sequence[str], default: Sequence[str]
) -> list[str]:
    """Several values of ``name`` (``?builds=a&builds=b``), each one of ``choices``.

    Normalised: each value once, in the order of ``choices``, so a repeated or reordered
    parameter names the same selection (and the same cache entry)."""
    raw = {value for value in _many(query, name) if value != ""}
    if not raw:
        return list(default)
    unknown = sorted(value for value in raw if value not in choices)
    if unknown:
        raise BadParam(name, f"{unknown[0][:60]!r} is not one of the choices shown")
    return [choice for choice in choices if choice in raw]


def subset_param(
    query: Mapping[str, Any], name: str, choices: Sequence[str], default: Sequence[str]
) -> list[str]:
    """``choices_param``, or every choice for ``?<name>=all`` (the "show all" link of a page
    that draws a bounded number of setups by default)."""
    if ALL in _many(query, name):
        return list(choices)
    return choices_param(query, name, choices, default)


def busiest_first(
    ids: Sequence[int], runs: Mapping[int, tuple[float, ...]], first: Sequence[int] = ()
) -> list[int]:
    """Setup ids, those in ``first`` first (in its order), then the most-run: ``runs`` maps
    an id to (run count, newest run's time, newest run's id), the most recently run first
    among equals, then as given: the order a page picks its default setups in."""
    given = {setup_id: i for i, setup_id in enumerate(ids)}
    leading = [i for i in dict.fromkeys(first) if i in given]
    led = set(leading)
    rest = sorted(
        (i for i in ids if i not in led),
        key=lambda i: (tuple(-v for v in runs.get(i, (0,))), given[i]),
    )
    return leading + rest


def format_param(query: Mapping[str, Any]) -> str | None:
    """``csv`` or ``json`` for a download, None for the page."""
    raw = _one(query, "format")
    if raw == "":
        return None
    if raw not in ("csv", "json"):
        raise BadParam("format", f"expected csv or json, got {raw[:20]!r}")
    return raw


# --- scopes: workload x hardware x UP/SMP -----------------------------------------------


@dataclass(frozen=True)
class Scope:
    """The runs a scaling, kernel-time or wakeups chart ranges over."""

    key: str  # "<workload id>-<hardware id>-<mode>", the URL's ``scope``
    label: str
    setups: tuple[Mapping[str, Any], ...]

    @property
    def setup_ids(self) -> list[int]:
        return [s["id"] for s in self.setups]

    def numeric_params(self) -> list[str]:
        """Parameters with numbers in these setups, the ones that vary first (x candidates)."""
        values: dict[str, set[float]] = {}
        for setup in self.setups:
            for name, value in setup["params"].items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    values.setdefault(name, set()).add(float(value))
        return sorted(values, key=lambda n: (len(values[n]) < 2, n))

    def varying_params(self) -> list[str]:
        """Numeric parameters with several values, the usual x axes (rooms, threads) first."""
        varying = [n for n in self.numeric_params() if self.distinct_values(n) > 1]
        return sorted(
            varying, key=lambda n: (n not in USUAL_X, USUAL_X.index(n) if n in USUAL_X else 0, n)
        )

    def held_fixed(self, param: str) -> dict[str, list[int]]:
        """Setups grouped by their *other* parameters, so a line varies ``param`` alone.

        Keys are the other parameters as text ("messages=1000, server_nice=0"); only groups
        with at least two values of ``param`` are kept, the largest group first.
        """
        groups: dict[str, list[Mapping[str, Any]]] = {}
        for setup in self.setups:
            if param in setup["params"]:
                rest = {k: v for k, v in setup["params"].items() if k != param}
                groups.setdefault(params_text(rest), []).append(setup)
        kept = {
            key: [s["id"] for s in group]
            for key, group in groups.items()
            if len({repr(s["params"][param]) for s in group}) > 1
        }
        return dict(sorted(kept.items(), key=lambda item: (-len(item[1]), item[0])))

    def distinct_values(self, name: str) -> int:
        return len({repr(s["params"].get(name)) for s in self.setups if name in s["params"]})

    def has_params(self, names: Sequence[str]) -> bool:
        return any(all(n in s["params"] for n in names) for s in self.setups)


class _Keyed(Protocol):
    @property
    def key(self) -> str: ...


ScopeT = TypeVar("ScopeT", bound=_Keyed)


def scope_param(query: Mapping[str, Any], scopes: Sequence[ScopeT]) -> ScopeT | None:
    """The scope named by ``scope``, else the first one (None when there is none)."""
    return scope_named(_one(query, "scope"), scopes)


def scope_named(raw: str, scopes: Sequence[ScopeT]) -> ScopeT | None:
    """The scope whose key is ``raw``, else the first one (``scope_param``)."""
    if raw == "":
        return scopes[0] if scopes else None
    for scope in scopes:
        if scope.key == raw:
            return scope
    raise BadParam("scope", f"{raw[:60]!r} names no workload/hardware/mode with runs")


def params_text(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(params.items())) or "no other parameters"


def setup_label(setup: Mapping[str, Any]) -> str:
    return params_text(setup["params"]) if setup["params"] else "no parameters"


def default_metric(metrics: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """Higher-is-better first (throughput, the headline number), then lower-is-better
    (latency), then metrics without a direction (a message count)."""
    rank = {"higher": 0, "lower": 1}
    ranked = sorted(metrics, key=lambda m: rank.get(m["better"], 2))
    return ranked[0] if ranked else None


def metric_param(
    query: Mapping[str, Any], metrics: Sequence[Mapping[str, Any]]
) -> tuple[Mapping[str, Any] | None, str]:
    """(metric, note). ``metric`` is an id or a name (``metric=events_per_s``, or
    ``metric=events_per_s (events/s)`` where the name is in two units; ``metric_named``).
    A metric id this selection has no data for falls back to the default, with a note:
    switching setups keeps the old metric in the URL, which is not an error. A name is
    what a person typed: one this selection does not have is a 400 naming it."""
    return metric_asked(_one(query, "metric"), metrics)


def metric_asked(
    asked: str, metrics: Sequence[Mapping[str, Any]]
) -> tuple[Mapping[str, Any] | None, str]:
    """``metric_param`` of a query whose ``metric`` is ``asked``."""
    raw = asked.strip()
    if raw and not is_number(raw):
        return metric_named(raw, metrics), ""
    wanted = int(raw) if raw else None
    chosen = default_metric(metrics)
    if wanted is None:
        return chosen, ""
    for metric in metrics:
        if metric["id"] == wanted:
            return metric, ""
    name = chosen["name"] if chosen else "nothing"
    return chosen, f"metric {wanted} has no results here; showing {name}."


def metric_named(
    raw: str, metrics: Sequence[Mapping[str, Any]], name: str = "metric"
) -> Mapping[str, Any]:
    """The one metric of ``metrics`` called ``raw``: its name (``events_per_s``), or its name
    and unit as the pickers show them (``events_per_s (events/s)``). A name no metric has,
    or one in several units, is a ``BadParam`` saying so and listing what would do."""
    if len(raw) > MAX_TEXT:
        raise BadParam(name, f"at most {MAX_TEXT} characters, got {len(raw)}")
    found = [m for m in metrics if m["name"] == raw]
    if not found:
        found = [m for m in metrics if f"{m['name']} ({m['unit']})" == raw]
    if len(found) == 1:
        return found[0]
    if found:
        units = ", ".join(f"{m['name']} ({m['unit']})" for m in found)
        raise BadParam(name, f"{raw[:60]!r} is in {len(found)} units: {units}; give one of those")
    known = ", ".join(sorted({m["name"] for m in metrics})[:12]) or "none here"
    raise BadParam(name, f"no metric {raw[:60]!r} here; these have results: {known}")


# --- set-ups and builds by name ----------------------------------------------------------


@dataclass(frozen=True)
class SetupKey:
    """A set-up as a person names it: ``VolanoMark/P8/UP`` (workload, hardware, mode), with
    the parameters that tell its set-ups apart when there are several:
    ``VolanoMark/P8/UP/rooms=10,messages=1000``. The workload is its name, with or without
    its version."""

    workload: str
    hardware: str
    mode: str
    params: tuple[tuple[str, str], ...] = ()

    def text(self) -> str:
        return "/".join([self.workload, self.hardware, self.mode])


def setup_ref_param(query: Mapping[str, Any], name: str = "setup") -> int | SetupKey | None:
    """``setup`` as an id (``setup=4``) or a readable key (``SetupKey``); None when absent.
    The key is matched against the set-ups found for it with ``setup_of_key``."""
    raw = text_param(query, name)
    if raw is None:
        return None
    if is_number(raw):
        return int(raw)
    parts = raw.split("/")
    if len(parts) not in (3, 4) or not all(p.strip() for p in parts[:3]):
        raise BadParam(
            name,
            f"expected a set-up id or workload/hardware/mode such as VolanoMark/P8/UP "
            f"(then /rooms=10 to pick among its set-ups), got {raw[:60]!r}",
        )
    params: list[tuple[str, str]] = []
    if len(parts) == 4:
        for item in (p.strip() for p in parts[3].split(",") if p.strip()):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise BadParam(name, f"expected parameters as rooms=10,messages=1000, got {item!r}")
            params.append((key.strip(), value.strip()))
    return SetupKey(parts[0].strip(), parts[1].strip(), parts[2].strip(), tuple(params))


def setup_of_key(
    key: SetupKey, setups: Sequence[Mapping[str, Any]], name: str = "setup"
) -> Mapping[str, Any]:
    """The one set-up of ``setups`` (``setup_dict`` rows of the key's workload, hardware and
    mode) whose parameters include the key's, or among several the one with just those.
    None or several: a ``BadParam`` saying which,
    listing the set-ups' parameters so the reader can add the ones that tell them apart."""
    matching = [
        s
        for s in setups
        if all(k in s["params"] and str(s["params"][k]) == v for k, v in key.params)
    ]
    exact = [s for s in matching if len(s["params"]) == len(key.params)]
    if len(matching) == 1 or len(exact) == 1:  # rooms=10 names the set-up of just rooms=10
        return matching[0] if len(matching) == 1 else exact[0]
    asked = key.text() + ("/" + ",".join(f"{k}={v}" for k, v in key.params) if key.params else "")
    if not setups:
        raise BadParam(name, f"no set-up {key.text()!r} with runs (workload/hardware/mode)")
    if not matching:
        raise BadParam(name, f"no set-up {asked!r}; its set-ups have {_setups_listed(setups)}")
    raise BadParam(
        name,
        f"{asked!r} matches {len(matching)} set-ups: {_setups_listed(matching)}; add the "
        f"parameters that tell them apart, e.g. {key.text()}/"
        + ",".join(f"{k}={v}" for k, v in sorted(matching[0]["params"].items())),
    )


def _setups_listed(setups: Sequence[Mapping[str, Any]], most: int = 6) -> str:
    texts = [setup_label(s) for s in setups[:most]]
    more = f" and {len(setups) - most} more" if len(setups) > most else ""
    return "; ".join(texts) + more


def build_param(
    query: Mapping[str, Any], name: str, builds: Mapping[str, Sequence[int]]
) -> list[int]:
    """The run ids of the build named by ``name`` (``6.8.0`` or ``6.8.0+patch-a``, as
    ``Run.build`` writes it) among ``builds`` (a set-up's builds and their run ids); [] when
    absent. An unknown build is a 400 naming it and the set-up's nearest builds."""
    raw = text_param(query, name)
    if raw is None:
        return []
    if raw in builds:
        return list(builds[raw])
    near = [b for b in builds if b.startswith(raw.split("+")[0])][:8] or list(builds)[:8]
    raise BadParam(
        name, f"no build {raw[:60]!r} in this set-up; it has {', '.join(near) or 'none'}"
    )


# --- the across-kernels page -----------------------------------------------------------

# The one table the page downloads (``exports.series_table``'s name).
ACROSS_KERNELS = "across-kernels"


class _Scope(Protocol):
    """A scope as a picker offers it: its key (the URL's ``scope``) and ids."""

    @property
    def key(self) -> str: ...

    @property
    def ids(self) -> tuple[int, int, str]: ...


@dataclass(frozen=True)
class KernelsQuery:
    """What a /kernels/ URL asks for (the page, its figure and its downloads), each parameter
    read and checked once, here, so the views and the page's data read one plain value and
    no query string. The scope, which only matters when no set-up is named, is matched
    against the scopes with runs (``scopes``, read only then); the metric (an id or a name,
    matched with ``metric_asked`` against the set-up's) is kept as given, which also names
    the page's cached context."""

    setup: int | SetupKey | None
    scope: _Scope | None
    metric: str
    baseline: int | None
    format: str | None

    @classmethod
    def read(
        cls, query: Mapping[str, Any], scopes: Callable[[], Sequence[_Scope]] = tuple
    ) -> KernelsQuery:
        """The query's selection; a ``BadParam`` for the first parameter that is malformed
        or names nothing with runs. ``chart`` only matters to a download, and is checked
        only then."""
        setup = setup_ref_param(query)
        fmt = format_param(query)
        if fmt is not None:
            choice_param(query, "chart", (ACROSS_KERNELS,), ACROSS_KERNELS)
        baseline = int_param(query, "baseline")
        raw_scope = _one(query, "scope")
        scope = scope_named(raw_scope, scopes()) if setup is None and raw_scope else None
        return cls(setup, scope, _one(query, "metric"), baseline, fmt)

    @property
    def setup_id(self) -> int | None:
        """The set-up when the query gives it by id (one given by name is looked up first:
        ``chart_queries.setup_id_of``)."""
        return self.setup if isinstance(self.setup, int) else None

    @property
    def metric_id(self) -> int | None:
        """The metric when the query gives it by id."""
        raw = self.metric.strip()
        return int(raw) if is_number(raw) else None
