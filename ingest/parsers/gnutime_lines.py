"""The line readers of the ``time`` parser (gnutime.py): one function per layout.

Each reader turns one line into ``(field, value, stddev)`` triples; gnutime.py groups them
into timings. Every number goes through the shared grammar (numbers.py) and clock values are
folded base 60 with Decimal, so ``2:50.73`` is exactly 170.73 seconds.
"""

from __future__ import annotations

import re
from decimal import Decimal

from ingest.parsers.base import ParseError
from ingest.parsers.numbers import parse_number

# field -> (metric, unit, better)
METRICS = {
    "elapsed": ("elapsed_s", "s", "lower"),
    "user": ("user_s", "s", "lower"),
    "system": ("system_s", "s", "lower"),
    "cpu": ("cpu_pct", "%", "none"),
    "max_rss": ("max_rss_kb", "KB", "lower"),
    "major_faults": ("major_faults", "count", "none"),
    "minor_faults": ("minor_faults", "count", "none"),
    "context_switches": ("context_switches", "count", "none"),
    "sleeps": ("sleeps", "count", "none"),
    # GNU time -v only: every other field it prints, under its own name.
    "voluntary_context_switches": ("voluntary_context_switches", "count", "none"),
    "involuntary_context_switches": ("involuntary_context_switches", "count", "none"),
    "swaps": ("swaps", "count", "none"),
    "fs_inputs": ("fs_inputs", "count", "none"),
    "fs_outputs": ("fs_outputs", "count", "none"),
    "socket_msgs_sent": ("socket_msgs_sent", "count", "none"),
    "socket_msgs_received": ("socket_msgs_received", "count", "none"),
    "signals_delivered": ("signals_delivered", "count", "none"),
    "page_size": ("page_size_bytes", "bytes", "none"),
    "avg_shared_text": ("avg_shared_text_kb", "KB", "none"),
    "avg_unshared_data": ("avg_unshared_data_kb", "KB", "none"),
    "avg_stack": ("avg_stack_kb", "KB", "none"),
    "avg_total": ("avg_total_kb", "KB", "none"),
    "avg_rss": ("avg_rss_kb", "KB", "none"),
}
# Linux's getrusage never fills these (always 0, GNU time prints them anyway): a 0 there is
# no measurement, so it is dropped with a warning like a pre-2.6.32 maximum RSS of 0.
UNFILLED_WHEN_ZERO = frozenset(
    {"max_rss", "avg_shared_text", "avg_unshared_data", "avg_stack", "avg_total", "avg_rss"}
)
Value = tuple[str, float, float | None]

EXIT = re.compile(r"^\s*(?:Command exited with non-zero status|Exit status:)\s*(?P<status>\d+)")
# kernbench 0.4x: "Average Optimal load -j 8 Run (std deviation):"; side-by-side tables
# print "Average Half load -j 8" alone.
# OSDL STP prints the load word before -j: "Average Optimal -j 32 Load Run:",
# "Average Maximal -j Load Run:", "Average Half Load -j 4 Run:".
KERNBENCH_BLOCK = re.compile(
    r"^Average (?P<load>\w+) [Ll]oad(?: -j(?: (?P<jobs>\d+))?)?(?:\s+Run\b.*)?$"
    r"|^Average (?P<load2>\w+) -j(?: (?P<jobs2>\d+))? [Ll]oad\s+Run\b.*$"
)
# kernbench's own progress lines: not prose (a label stays in force across them).
KERNBENCH_NOISE = re.compile(
    r"^(?:\w+ load -j ?\d* run number \d+\.\.\.|Warmup run\.\.\.|Cleaning source tree\.\.\."
    r"|Caching kernel source in ram\.\.\.|Making mrproper|Making defconfig\.\.\.|\d+ cpus found"
    r"|No old config found, using defconfig|All data logged to kernbench\.log"
    r"|Performing \d+ runs of|Kernbench Version \S+)$"
)
_GNU_DEFAULT = re.compile(
    r"(?P<user>\S+)user\s+(?P<system>\S+)system\s+(?P<elapsed>\S+)elapsed\s+(?P<cpu>\S+)%CPU"
    r"(?:\s+\(\S+avgtext\+\S+avgdata\s+(?P<max_rss>\S+)maxresident\)k)?"
)
_GNU_FAULTS = re.compile(r"\((?P<major_faults>\S+)major\+(?P<minor_faults>\S+)minor\)pagefaults")
_GNU_VERBOSE = {
    "user time (seconds)": "user",
    "system time (seconds)": "system",
    "percent of cpu this job got": "cpu",
    "elapsed (wall clock) time (h:mm:ss or m:ss)": "elapsed",
    "maximum resident set size (kbytes)": "max_rss",
    "major (requiring i/o) page faults": "major_faults",
    "minor (reclaiming a frame) page faults": "minor_faults",
    "voluntary context switches": "voluntary_context_switches",
    "involuntary context switches": "involuntary_context_switches",
    "swaps": "swaps",
    "file system inputs": "fs_inputs",
    "file system outputs": "fs_outputs",
    "socket messages sent": "socket_msgs_sent",
    "socket messages received": "socket_msgs_received",
    "signals delivered": "signals_delivered",
    "page size (bytes)": "page_size",
    "average shared text size (kbytes)": "avg_shared_text",
    "average unshared data size (kbytes)": "avg_unshared_data",
    "average stack size (kbytes)": "avg_stack",
    "average total size (kbytes)": "avg_total",
    "average resident set size (kbytes)": "avg_rss",
}
# "exit status" is read by EXIT; "command being timed" by gnutime._context.
VERBOSE_LABELS = (*_GNU_VERBOSE, "exit status", "command being timed")
_BASH = re.compile(
    r"^(?P<field>real|user|sys)\s+(?:(?P<min>\S+)m(?P<sec>[^\s()]+?)s|(?P<plain>[^\s()]+))"
    r"(?P<rest>\S*)(?:\s+(?P<note>\(.*\)))?$"
)
_LKP = re.compile(r"^(?P<field>real|user|sys):\s+(?P<sec>\S+)s$")
_TCSH = re.compile(
    r"^(?P<user>\S+)u\s+(?P<system>\S+)s\s+(?P<elapsed>[\d:.,]+)\s+(?P<cpu>\S+)%(?:\s|$)"
)
_KERNBENCH = {
    "elapsed time": "elapsed",
    "user time": "user",
    "system time": "system",
    "percent cpu": "cpu",
    "context switches": "context_switches",
    "sleeps": "sleeps",
}
_KERNBENCH_LINE = re.compile(
    r"^(?P<label>Elapsed\s+Time|User\s+Time|System\s+Time|Percent\s+CPU|Context\s+Switches"
    r"|Sleeps)\s+(?P<value>\S+)(?:\s+\((?P<stddev>\S+)\))?(?P<rest>.*)$"
)
_BASH_FIELDS = {"real": "elapsed", "user": "user", "sys": "system"}
# A shell prompt: "$ ", "# ", "host:~/dir$ ", "[root@host ~]# ", "user@host:~ > ".
_PROMPT = r"(?:\[[^\]]*\][$#]|[\w.@:~/+-]*\s?[$#%>])\s+"
_TIMED = re.compile(rf"^(?:{_PROMPT})?(?:/usr/bin/)?time\s+(?P<flags>(?:-\w+\s+)*)(?P<cmd>\S.*)$")
_PROMPTED_TIME = re.compile(rf"^{_PROMPT}(?:/usr/bin/)?time\s+(?:-\w+\s+)*(?P<cmd>\S.*)$")
_MAKE = re.compile(rf"^(?:{_PROMPT})?(?P<cmd>make(?:\s+(?!\*\*\*)[^:\s][^:]*)?)$")


def clock_seconds(token: str, line: int) -> float:
    """``[h:]mm:ss[.ss]`` or plain seconds, folded base 60 as lkp's time parser does."""
    parts = token.split(":")
    if len(parts) > 3:
        raise ParseError(f"elapsed time {token!r} is not [h:]m:ss", line)
    total = Decimal(0)
    for part in parts:
        parse_number(part, line=line, what="elapsed time")  # validates; raises naming the line
        total = total * 60 + Decimal(part)
    return float(total)


def command_line(stripped: str) -> tuple[str, bool] | None:
    """(timed command, explicit) for ``$ time make -j4`` / ``time ./dbench 16`` / ``make``.

    ``explicit`` is False for a bare ``make ...`` line: verbose builds print many, so only
    the first one before a timing is taken as its command.
    """
    if match := _PROMPTED_TIME.match(stripped):
        return match["cmd"].strip(), True
    stripped = stripped.rstrip(":")  # "time make -j30 bzImage:" introducing its output
    if (match := _TIMED.match(stripped)) and (
        match["flags"]
        or stripped.startswith("/usr/bin/time")
        or match["cmd"].startswith(("./", "/", "make"))
    ):
        return match["cmd"].strip(), True
    if match := _MAKE.match(stripped):
        return match["cmd"].strip(), False
    return None


def _percent(token: str, line: int, warnings: list[str]) -> list[Value]:
    token = token.rstrip("%")
    if token == "?":
        warnings.append(f"line {line}: CPU percentage is '?' (elapsed 0); cpu_pct omitted")
        return []
    return [("cpu", parse_number(token, line=line, what="CPU percentage"), None)]


def _gnu_default(text: str, line: int, warnings: list[str]) -> list[Value]:
    match = _GNU_DEFAULT.search(text)
    if not match:
        faults = _GNU_FAULTS.search(text)
        if not faults:
            return []
        return [
            (f, parse_number(faults[f], line=line, what=f), None)
            for f in ("major_faults", "minor_faults")
        ]
    out: list[Value] = [
        (f, parse_number(match[f], line=line, what=f"{f} time"), None) for f in ("user", "system")
    ]
    out.append(("elapsed", clock_seconds(match["elapsed"], line), None))
    out.extend(_percent(match["cpu"], line, warnings))
    if match["max_rss"] is not None:
        out.append(("max_rss", parse_number(match["max_rss"], line=line, what="maxresident"), None))
    return out


# Markup some pages put before each GNU time -v line (a reST comment ``.. ``, a ``# ``).
_VERBOSE_MARK = re.compile(r"^\s*(?:\.\.|#+|\|)\s+")


def verbose_text(text: str) -> str:
    """The line without a leading markup mark, for reading GNU time -v fields."""
    return _VERBOSE_MARK.sub("", text, count=1)


def verbose_prefix(text: str) -> bool:
    """A line that is only the start of a GNU time -v field (its label or its label and
    colon), the rest wrapped onto the next line by a mail client."""
    stripped = " ".join(verbose_text(text).strip().lower().split())
    if len(stripped) < 5:
        return False
    return any((label + ":").startswith(stripped) for label in VERBOSE_LABELS)


_ANY_VERBOSE = re.compile(
    "|".join(re.escape(label).replace(r"\ ", r"\s+") + r"\s*:" for label in VERBOSE_LABELS),
    re.IGNORECASE,
)


def names_verbose_field(text: str) -> bool:
    """Whether a line holds a GNU time -v field label with its colon, wherever it is."""
    return bool(_ANY_VERBOSE.search(text))


def _gnu_verbose(text: str, line: int, warnings: list[str]) -> list[Value]:
    label, sep, value = verbose_text(text).strip().rpartition(": ")
    field = _GNU_VERBOSE.get(" ".join(label.lower().split())) if sep else None
    if field is None:
        return []
    if field == "elapsed":
        return [(field, clock_seconds(value.strip(), line), None)]
    if field == "cpu":
        return _percent(value.strip(), line, warnings)
    return [(field, parse_number(value, line=line, what=label), None)]


def _shell(text: str, line: int, warnings: list[str]) -> list[Value]:
    stripped = text.strip()
    match = _BASH.match(stripped) or _LKP.match(stripped)
    if match:
        groups = match.groupdict()
        if groups.get("note"):
            note = groups["note"]
            warnings.append(f"line {line}: annotation {note!r} after {match['field']} ignored")
        if groups.get("rest"):
            if match["field"] == "real":
                raise ParseError(f"real time {stripped.split()[1]!r} is not a time", line)
            warnings.append(
                f"line {line}: {match['field']} time {stripped.split()[1]!r} is not a time "
                f"(text glued after it); {match['field']} omitted for this run"
            )
            return [("ignored", 0.0, None)]
        sec = groups.get("sec") or groups["plain"] or ""
        parse_number(sec, line=line, what="time")
        total = Decimal(sec)
        if groups.get("min"):
            parse_number(groups["min"], line=line, what="minutes")
            total += 60 * Decimal(groups["min"])
        return [(_BASH_FIELDS[match["field"]], float(total), None)]
    match = _TCSH.match(stripped)
    if not match:
        return []
    out: list[Value] = [
        (f, parse_number(match[f], line=line, what=f"{f} time"), None) for f in ("user", "system")
    ]
    out.append(("elapsed", clock_seconds(match["elapsed"], line), None))
    return out + _percent(match["cpu"], line, warnings)


def _kernbench(text: str, line: int, warnings: list[str]) -> list[Value]:
    match = _KERNBENCH_LINE.match(text.strip())
    if not match:
        return []
    label = " ".join(match["label"].split())
    rest = match["rest"].strip()
    if rest and not re.fullmatch(r"\([^()]*\)", rest):
        raise ParseError(
            f"{label}: values after {match['value']!r} ({rest!r}): side-by-side kernbench "
            "columns are not supported; give one column per file",
            line,
        )
    if rest:
        warnings.append(f"line {line}: annotation {rest!r} after {label} ignored")
    value = parse_number(match["value"], line=line, what=label)
    stddev = None
    if match["stddev"] is not None:
        stddev = parse_number(match["stddev"], line=line, what=f"{label} std deviation")
    return [(_KERNBENCH[label.lower()], value, stddev)]


def read_values(
    text: str, line: int, in_block: bool, warnings: list[str]
) -> tuple[bool, list[Value]]:
    """(read as kernbench, the timing fields one line holds), whatever the layout.

    Kernbench lines are only read inside an ``Average ... load`` block.
    """
    if in_block and (found := _kernbench(text, line, warnings)):
        return True, found
    return False, (
        _gnu_default(text, line, warnings)
        or _gnu_verbose(text, line, warnings)
        or _shell(text, line, warnings)
    )
