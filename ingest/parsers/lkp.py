"""The Intel kernel test robot's (LKP / 0-day) report mails (docs/parsers/lkp.md).

A report compares commits: a block names its parameters (``compiler/.../testcase:`` over
``gcc-12/.../will-it-scale``), lists the commits, and prints one row per metric with each
commit's mean, its spread (``± 3%``, left out below 2%) and the change between columns:

    d000e073ca2a08ab 89359897983825dbfc08578e7ee
    ---------------- ---------------------------
             %stddev     %change         %stddev
                 \\          |                \\
        263173           -11.7%     232411        will-it-scale.per_process_ops

lkp-tests prints each row with ``Compare.show_perf_change`` (lib/compare.rb): a mean as
``%10.2f`` below 1000, ``%10d`` below 1e8 and ``%.4g`` above, a spread as `` ±%3d%%`` of the
mean when it is over 2%, and a change as ``%+10.1f%%`` (``%+.2g`` past 100000) or, for
metrics that are already percentages (``mpstat.cpu.all.sys%``, ``perf-profile.*``), as the
plain difference. Failure rows (``fail:runs``) print how many runs showed the failure out of
how many runs, per commit.

Each (table, commit column) is one record: ``label`` is the commit as the column header
prints it, the other keys the table's parameters. Means are read as printed, with their
spread as a :class:`Summary`; the changes are derived from the means, so they are kept in
the metadata, never stored as values. Replies are read too: mail quotes (``> ``) are
stripped, and a row a mail client wrapped onto the next line is joined back, token by token.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ingest.parsers.base import (
    Better,
    KeyValue,
    Measurement,
    ParseError,
    ParseResult,
    Record,
    Summary,
    recognises,
    register,
)
from ingest.parsers.text import numbered_lines, skip_mail_header

# --- what a line of the report is -------------------------------------------------------

_HEADLINE = re.compile(
    r"noticed an? (?P<change>[-+]?\d+(?:\.\d+)?%) (?P<kind>regression|improvement) of "
    r"(?P<metric>[^\s:]\S*?)(?=\s+on:|\s+due to|\s*$|\s)"
)
# "| testcase: change | netperf: netperf.Throughput_Mbps  6.0% regression |": the other
# tests a commit moved, each named with its direction.
_IMPACT = re.compile(
    r"^\|\s*testcase: change\s*\|\s*[\w.-]+:\s*(?P<metric>\S+)\s+(?P<change>[-+]?\d+(?:\.\d+)?%)"
    r"\s+(?P<kind>regression|improvement)"
)
_COMMIT = re.compile(r'^commit:\s*(?P<sha>[0-9a-f]{7,40})\b\s*(?:\("(?P<subject>.*)"\))?\s*$')
_TREE_URL = re.compile(r"^(?P<url>(?:https?|git)://\S+)(?:\s+(?P<branch>\S+))?\s*$")
_ALSO_ON = re.compile(r"^\[(?P<what>[^\]]*?) on (?P<tree>\S+)\s+(?P<sha>[0-9a-f]{7,40})\s*\]")
_FIELD = re.compile(
    r"^(?:in )?(?P<key>testcase|config|compiler|url|base|patch link|patch subject|version)"
    r":\s*(?P<value>\S.*?)\s*$"
)
_MACHINE = re.compile(r"^(?:on )?test machine:\s*(?P<value>\S.*?)\s*$")
_PARAMETERS = re.compile(r"^(?:with following )?parameters:\s*$")
_PARAMETER = re.compile(r"^\s+(?P<key>[\w.-]+):\s*(?P<value>.*?)\s*$")
_RULE = re.compile(r"^={20,}\s*$")
_AXES = re.compile(r"^(?P<keys>[\w.-]+(?:/[\w.-]+)*):\s*$")
_COMMIT_LIST = re.compile(r"^commit:\s*$")
_LISTED_COMMIT = re.compile(r'^\s*(?P<id>[\w.+~^-]+)(?:\s+\("(?P<subject>.*)"\))?')
_DASHES = re.compile(r"^-{10,}(?:\s+-{10,})*\s*$")
_HEADER_WORDS = frozenset({"%stddev", "%change", "change", "fail:runs", "%reproduction", "\\", "|"})
_QP_SIGNS = re.compile(r"=C2=B1|=B1 |=C4=85|=\n", re.IGNORECASE)

# --- the tokens of a row ----------------------------------------------------------------

_NUMBER = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_CHANGE = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?%?$")
_SPREAD = re.compile(r"^(?P<pct>\d+(?:\.\d+)?)%$")
_FAIL_RUNS = re.compile(r"^(?P<fails>\d*):(?P<runs>\d+)$")
# "±" as a Latin-1 mail shows it when read as UTF-8 (U+FFFD), or UTF-8 read as Latin-1.
_PLUS_MINUS = ("\ufffd", "\u00c2\u00b1", "+/-")


def _is_number(token: str) -> bool:
    return _NUMBER.match(token) is not None


def _looks_numeric(token: str) -> bool:
    """A mean, a change, a spread or a fail:runs cell: anything that is not a metric name."""
    return token == "±" or _CHANGE.match(token) is not None or _FAIL_RUNS.match(token) is not None


def _tokens(text: str) -> list[str]:
    for sign in _PLUS_MINUS:
        if sign in text:
            text = text.replace(sign, "±")
    if "±" in text:
        text = text.replace("±", " ± ")
    return text.split()


def _resolution(token: str) -> float:
    """The step of the last printed digit: ``0.07`` -> 0.01, ``7732`` -> 1, ``1.792e+08`` -> 1e5.

    lkp-tests rounds every mean it prints (``%.2f``, ``%d``, ``%.4g``): two commits whose
    printed means differ by less than this cannot be told apart from the mail.
    """
    mantissa, _, exponent = token.lower().partition("e")
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** ((int(exponent) if exponent else 0) - decimals)


# --- what the parser collects ----------------------------------------------------------


@dataclass(slots=True)
class _Cell:
    """One commit's value in a row, as printed."""

    value: float
    token: str
    spread_pct: float | None = None
    runs: int | None = None  # fail:runs rows only


@dataclass(slots=True)
class _Row:
    name: str
    failure: bool
    cells: list[_Cell]
    changes: list[str | None]  # column 2.. against column 1, as printed ("-11.7%", "+0.5")
    line: int


@dataclass(slots=True)
class _Table:
    number: int
    line: int
    labels: list[str]
    params: dict[str, KeyValue]
    subjects: dict[str, str]
    rows: list[_Row] = field(default_factory=list)


@dataclass(slots=True)
class _Mail:
    """What the report states about itself, outside its tables."""

    metadata: dict[str, str | int | float] = field(default_factory=dict)
    parameters: dict[str, str] = field(default_factory=dict)
    headlines: list[tuple[str, str, str]] = field(default_factory=list)  # metric, kind, change
    commit_sha: str | None = None
    commit_subject: str | None = None
    warnings: list[str] = field(default_factory=list)


# --- parameters and commits of a table ----------------------------------------------------


def _key_value(text: str) -> KeyValue:
    return int(text) if text.isdigit() and len(text) < 19 else text


def _split_axes(
    keys_text: str, values_text: str, known: Mapping[str, str], line: int
) -> dict[str, KeyValue]:
    """``compiler/kconfig/.../testcase:`` over its values, as the table states them.

    A value may hold a slash itself (ltp's ``test: hugetlb/hugemmap10``): the mail's own
    ``parameters:`` section names such values, so they are kept whole; otherwise a count
    that does not match is refused rather than guessed.
    """
    keys = keys_text.split("/")
    values = values_text.strip().split("/")
    if len(values) != len(keys):
        protected = values_text.strip()
        for value in known.values():
            if "/" in value and value in protected:
                protected = protected.replace(value, value.replace("/", "\x00"))
        values = [v.replace("\x00", "/") for v in protected.split("/")]
    if len(values) != len(keys):
        raise ParseError(
            f"LKP parameters: {len(keys)} names ({keys_text}) but {len(values)} values "
            f"({values_text.strip()!r}); a value holds a '/' the mail does not name",
            line,
        )
    return {k: _key_value(v) for k, v in zip(keys, values, strict=True)}


def _subject_of(text: str) -> tuple[str, str | None] | None:
    match = _LISTED_COMMIT.match(text)
    if not match:
        return None
    return match["id"], match["subject"]


# --- rows ------------------------------------------------------------------------------


class _Incomplete(Exception):
    """The row's tokens end before its metric name: it continues on the next line."""


def _read_row(tokens: list[str], columns: int, failure: bool, line: int) -> tuple[_Row, int]:
    """One row from ``tokens`` (a wrapped row's lines joined); returns it and how many tokens
    it used. Raises _Incomplete when the tokens end first, ParseError when one does not fit."""
    at = 0
    cells: list[_Cell] = []
    changes: list[str | None] = []

    def take() -> str:
        nonlocal at
        if at >= len(tokens):
            raise _Incomplete
        at += 1
        return tokens[at - 1]

    def peek(offset: int = 0) -> str | None:
        return tokens[at + offset] if at + offset < len(tokens) else None

    for column in range(columns):
        if column:
            change = take()
            if failure:
                if not _CHANGE.match(change):
                    raise ParseError(
                        f"LKP fail:runs row: {change!r} is not a %reproduction change", line
                    )
                changes.append(change)
            else:
                following = peek()
                if following is None and _is_number(change) and not change.endswith("%"):
                    raise _Incomplete
                # A change is printed before every mean but the first; if what follows this
                # number is a spread or the metric's name, the change cell was left blank.
                if (
                    _is_number(change)
                    and following is not None
                    and (following == "±" or not _looks_numeric(following))
                ):
                    at -= 1
                    changes.append(None)
                elif _CHANGE.match(change):
                    changes.append(change)
                else:
                    raise ParseError(f"LKP row: {change!r} is not a number or a change", line)
        token = take()
        if failure:
            match = _FAIL_RUNS.match(token)
            if not match:
                raise ParseError(f"LKP fail:runs row: {token!r} is not a fails:runs cell", line)
            fails = int(match["fails"] or 0)
            cells.append(_Cell(float(fails), match["fails"] or "0", runs=int(match["runs"])))
            continue
        if not _is_number(token):
            raise ParseError(f"LKP row: the value {token!r} is not a number", line)
        value = float(token)
        if not math.isfinite(value):
            raise ParseError(f"LKP row: the value {token!r} is not a finite number", line)
        cell = _Cell(value, token)
        if peek() == "±":
            take()
            pct = take()
            spread = _SPREAD.match(pct)
            if not spread:
                raise ParseError(f"LKP row: the spread '± {pct}' is not a percentage", line)
            cell.spread_pct = float(spread["pct"])
        cells.append(cell)
    name = take()
    if _looks_numeric(name):
        raise ParseError(
            f"LKP row: {name!r} where the metric name should follow {columns} columns "
            "(a column too many, or the row is cut)",
            line,
        )
    return _Row(name, failure, cells, changes, line), at


def _looks_like_row(tokens: list[str]) -> bool:
    """A line that starts with a word but carries two or more numeric cells is a row whose
    value cannot be read, not prose after the table."""
    return sum(1 for t in tokens if _looks_numeric(t)) >= 2


def _read_table(
    lines: list[tuple[int, str]], start: int, table: _Table, warnings: list[str]
) -> int:
    """Read rows from ``lines[start:]`` into ``table``; returns the index after the table."""
    columns = len(table.labels)
    failure: bool | None = None
    pending: list[str] = []
    pending_line = 0
    i = start
    while i < len(lines):
        number, text = lines[i]
        stripped = text.strip()
        if not stripped:
            if pending:
                raise ParseError(
                    f"LKP row cut short: {' '.join(pending)!r} has no metric name", pending_line
                )
            break
        tokens = _tokens(stripped)
        if all(t in _HEADER_WORDS for t in tokens):
            if "fail:runs" in tokens:
                failure = True
            elif "%stddev" in tokens:
                failure = False
            i += 1
            continue
        if not pending:
            if failure is None:
                break  # dashes without a %stddev / fail:runs header: not a comparison table
            if not _looks_numeric(tokens[0]):
                if _looks_like_row(tokens):
                    raise ParseError(f"LKP row: the value {tokens[0]!r} is not a number", number)
                break  # prose right after the table
            pending_line = number
        pending.extend(tokens)
        try:
            row, used = _read_row(pending, columns, bool(failure), pending_line)
        except _Incomplete:
            i += 1
            continue
        if used < len(pending):
            warnings.append(
                f"line {number}: text after LKP metric {row.name!r} ignored: "
                f"{' '.join(pending[used:])!r}"
            )
        table.rows.append(row)
        pending = []
        i += 1
    if pending:
        raise ParseError(
            f"LKP row cut short at the end of the file: {' '.join(pending)!r}", pending_line
        )
    return i


# --- the mail --------------------------------------------------------------------------


def _scan(lines: list[tuple[int, str]]) -> tuple[list[_Table], _Mail]:
    mail = _Mail()
    tables: list[_Table] = []
    params: dict[str, KeyValue] = {}
    subjects: dict[str, str] = {}
    params_line: int | None = None
    i = 0
    while i < len(lines):
        number, text = lines[i]
        stripped = text.strip()
        if not stripped:
            i += 1
            continue
        if _DASHES.match(stripped):
            before = len(tables)
            i = _table_at(lines, i, tables, params, subjects, params_line, mail.warnings)
            if len(tables) > before:  # a table's parameters are its own
                params, subjects, params_line = {}, {}, None
            continue
        if _RULE.match(stripped):
            found = _axes_after(lines, i + 1, mail.parameters)
            if found is not None:
                params, i = found
                params_line, subjects = number, {}
                continue
        elif _COMMIT_LIST.match(stripped):
            i += 1
            while i < len(lines) and lines[i][1].strip():
                listed = _subject_of(lines[i][1])
                if listed and listed[1] is not None:
                    subjects[listed[0]] = listed[1]
                i += 1
            continue
        else:
            _mail_line(lines, i, stripped, mail)
        i += 1
    return tables, mail


def _axes_after(
    lines: list[tuple[int, str]], i: int, known: Mapping[str, str]
) -> tuple[dict[str, KeyValue], int] | None:
    """The ``names:`` / ``values`` pair after a ``=====`` rule, and the index after them."""
    while i < len(lines) and not lines[i][1].strip():
        i += 1
    if i >= len(lines) or not (axes := _AXES.match(lines[i][1].strip())):
        return None
    keys_line = lines[i][0]
    i += 1
    while i < len(lines) and not lines[i][1].strip():
        i += 1
    if i >= len(lines):
        raise ParseError("LKP parameters line without its values line", keys_line)
    number, values = lines[i]
    return _split_axes(axes["keys"], values, known, number), i + 1


def _table_at(
    lines: list[tuple[int, str]],
    i: int,
    tables: list[_Table],
    params: dict[str, KeyValue],
    subjects: dict[str, str],
    params_line: int | None,
    warnings: list[str],
) -> int:
    """Read the table whose dash line is ``lines[i]``, when it is one; returns where to go on."""
    number = lines[i][0]
    columns = 0
    j = i
    while j < len(lines) and _DASHES.match(lines[j][1].strip()):
        columns += len(lines[j][1].split())
        j += 1
    following = lines[j][1] if j < len(lines) else ""
    if "%stddev" not in following and "fail:runs" not in following:
        return j  # a rule of dashes in prose
    # The commit ids over the dashes, right-aligned and cut to the column width; a mail
    # client may have wrapped them onto two lines.
    ids: list[str] = []
    k = i - 1
    while k >= 0 and lines[k][1].strip() and len(ids) < columns:
        ids = _tokens(lines[k][1]) + ids
        k -= 1
    if len(ids) < columns:
        raise ParseError(
            f"LKP table of {columns} columns without its {columns} commit ids above the dashes",
            number,
        )
    labels = ids[-columns:]
    table = _Table(
        number=len(tables) + 1,
        line=params_line or number,
        labels=labels,
        params=dict(params),
        subjects=_subjects_by_label(labels, subjects),
    )
    end = _read_table(lines, j, table, warnings)
    if table.rows:
        tables.append(table)
    return end


def _subjects_by_label(labels: list[str], subjects: Mapping[str, str]) -> dict[str, str]:
    """The ``commit:`` list names commits by a short id; the columns by a longer prefix."""
    out = {}
    for label in labels:
        for listed, subject in subjects.items():
            if label.startswith(listed) or listed.startswith(label):
                out[label] = subject
                break
    return out


def _mail_line(lines: list[tuple[int, str]], i: int, stripped: str, mail: _Mail) -> None:
    """The report's own statements: headline, commit, tree, testcase, machine, parameters."""
    meta = mail.metadata
    if match := _HEADLINE.search(stripped):
        mail.headlines.append((match["metric"], match["kind"], match["change"]))
        meta.setdefault("headline", f"{match['change']} {match['kind']} of {match['metric']}")
    elif match := _IMPACT.match(stripped):
        mail.headlines.append((match["metric"], match["kind"], match["change"]))
    elif (match := _COMMIT.match(stripped)) and mail.commit_sha is None:
        mail.commit_sha, mail.commit_subject = match["sha"], match["subject"]
        following = lines[i + 1][1].strip() if i + 1 < len(lines) else ""
        if tree := _TREE_URL.match(following):
            meta["tree"] = following
            if tree["branch"]:
                meta["branch"] = tree["branch"]
    elif match := _ALSO_ON.match(stripped):
        meta[f"{match['what'].strip()} on {match['tree']}"] = match["sha"]
    elif match := _FIELD.match(stripped):
        key = {"testcase": "workload"}.get(match["key"], match["key"].replace(" ", "_"))
        meta.setdefault(key, match["value"])
    elif match := _MACHINE.match(stripped):
        meta.setdefault("test_machine", match["value"])
    elif _PARAMETERS.match(stripped):
        for _, text in lines[i + 1 :]:
            if not text.strip():
                continue
            if not (parameter := _PARAMETER.match(text)):
                break
            mail.parameters.setdefault(parameter["key"], parameter["value"])


# --- from rows to records ---------------------------------------------------------------


def _unit(metric: str) -> str:
    """Only what the name says for certain: a percentage, or perf-sched's milliseconds."""
    if metric.endswith("%") or metric.startswith("perf-profile."):
        return "%"
    if metric.startswith("perf-sched.") and ".ms." in f"{metric}.":
        return "ms"
    return ""


# perfdb's Metric.name holds 300 characters (ingest/field_lengths.py checks every name
# against it), room for the robot's perf-profile and perf-sched call chains as printed; a
# longer one still gets a stable stored name.
_NAME_LIMIT = 300


def _stored_name(name: str, long_names: dict[str, str]) -> str:
    """``name``, or when it is too long to store, its first 291 characters, ``~`` and 8 hex
    digits of its SHA-1: the same chain gets the same name in every mail, so its series
    stays one series, and ``long_names`` keeps the full name for the metadata."""
    if len(name) <= _NAME_LIMIT:
        return name
    short = f"{name[: _NAME_LIMIT - 9]}~{hashlib.sha1(name.encode()).hexdigest()[:8]}"
    long_names[short] = name
    return short


def _directions(tables: list[_Table], mail: _Mail) -> dict[str, Better]:
    """Which way is better for the metrics the robot names as regressed or improved.

    "a -11.7% regression of X": X fell and that is worse, so higher is better. Newer mails
    print the size without its sign ("a 11.7% regression"), so the sign is read from X's own
    change in the first table that prints one.
    """
    out: dict[str, Better] = {}
    for metric, kind, headline_change in mail.headlines:
        sign = 0
        for table in tables:
            row = next((r for r in table.rows if r.name == metric and not r.failure), None)
            if row and row.changes and row.changes[0]:
                value = float(row.changes[0].rstrip("%"))
                sign = (value > 0) - (value < 0)
                break
        if not sign and headline_change.startswith(("-", "+")):
            sign = -1 if headline_change.startswith("-") else 1
        if not sign:
            continue
        rose_and_better = (sign > 0) == (kind == "improvement")
        out.setdefault(metric, "higher" if rose_and_better else "lower")
    return out


def _change_key(kind: str, table: int, column: int, metric: str) -> str:
    """``change_pct:<metric>`` for the report's first comparison (table 1, its second
    commit against its first); ``change_pct@<table>.<column>:<metric>`` for the others."""
    where = "" if (table, column) == (1, 2) else f"@{table}.{column}"
    return f"{kind}{where}:{metric}"


def _records(
    tables: list[_Table], better: Mapping[str, Better], long_names: dict[str, str]
) -> list[Record]:
    records = []
    for table in tables:
        per_column: list[list[Measurement]] = [[] for _ in table.labels]
        for row in table.rows:
            if row.failure:
                failed = _stored_name(f"{row.name}.failed_runs", long_names)
                runs = _stored_name(f"{row.name}.runs", long_names)
                for column, cell in enumerate(row.cells):
                    per_column[column].append(Measurement(failed, cell.value, "runs", "lower", 1.0))
                    per_column[column].append(
                        Measurement(runs, float(cell.runs or 0), "runs", "none", 1.0)
                    )
                continue
            unit = _unit(row.name)
            direction = better.get(row.name, "none")
            name = _stored_name(row.name, long_names)
            for column, cell in enumerate(row.cells):
                summary = Summary(sd_pct=cell.spread_pct) if cell.spread_pct is not None else None
                per_column[column].append(
                    Measurement(name, cell.value, unit, direction, _resolution(cell.token), summary)
                )
        for label, measurements in zip(table.labels, per_column, strict=True):
            keys: dict[str, KeyValue] = {"label": label, **table.params}
            records.append(Record(keys=keys, line=table.line, measurements=tuple(measurements)))
    return records


def _metadata(tables: list[_Table], mail: _Mail) -> dict[str, str | int | float]:
    meta = dict(mail.metadata)
    first = tables[0]
    if "workload" not in meta and "testcase" in first.params:
        meta["workload"] = str(first.params["testcase"])
    machine = first.params.get("tbox_group") or meta.get("test_machine")
    if machine:
        meta["hardware"] = str(machine)
    meta["base_commit"] = first.labels[0]
    if len(first.labels) > 1:
        meta["commit"] = mail.commit_sha or first.labels[1]
    elif mail.commit_sha:
        meta["commit"] = mail.commit_sha
    for table in tables:
        for label, subject in table.subjects.items():
            meta.setdefault(f"commit_subject:{label}", subject)
    if mail.commit_sha and mail.commit_subject:
        meta.setdefault(f"commit_subject:{mail.commit_sha}", mail.commit_subject)
    for key, value in mail.parameters.items():
        meta.setdefault(f"parameter:{key}", value)
    for table in tables:
        for row in table.rows:
            kind = "reproduction" if row.failure else "change"
            for column, change in enumerate(row.changes, start=2):
                if change is None:
                    continue
                pct = change.endswith("%")
                key = _change_key(f"{kind}_pct" if pct else kind, table.number, column, row.name)
                meta[key] = float(change.rstrip("%"))
    return meta


@register("lkp")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    if re.search(r"^Content-Transfer-Encoding:\s*quoted-printable", text, re.I | re.M) and (
        _QP_SIGNS.search(text)
    ):
        raise ParseError(
            "the mail is quoted-printable encoded (=C2=B1, soft line breaks): save it "
            "decoded, as the list archive shows it, and upload that"
        )
    lines = skip_mail_header(numbered_lines(text))
    tables, mail = _scan(lines)
    if not tables:
        raise ParseError(
            "no LKP comparison table: no '%stddev %change %stddev' or 'fail:runs' header "
            "under a line of commit ids and dashes"
        )
    better = _directions(tables, mail)
    long_names: dict[str, str] = {}
    records = _records(tables, better, long_names)
    metadata = _metadata(tables, mail)
    for short, name in long_names.items():
        metadata[f"metric_name:{short}"] = name
    if long_names:
        mail.warnings.append(
            f"{len(long_names)} metric names are longer than the {_NAME_LIMIT} characters "
            "stored: kept as their head, '~' and a hash; the full names are in the metadata "
            "as metric_name:<stored name>"
        )
    return ParseResult(records=tuple(records), metadata=metadata, warnings=tuple(mail.warnings))


_RECOGNISED = re.compile(
    r"%stddev\s+%change\s+%stddev|fail:runs\s+%reproduction\s+fail:runs", re.MULTILINE
)


@recognises("lkp")
def recognise(text: str) -> bool:
    """The robot's table header is the report's signature, in its mails and in replies."""
    return _RECOGNISED.search(text[:1_000_000]) is not None
