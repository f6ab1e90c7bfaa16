"""Data for the dashboard tests, stored through the real ingest pipeline.

One bundle covers every page: VolanoMark on one machine, stock and patched kernels with three
trials each (the first a discarded warm-up on one run), readprofile and vmstat files, a room
count that varies (scaling) and the nice/threshold grid of 001 (wakeups). Values are made up
for the tests; the expectations in the tests are computed from ``THROUGHPUTS`` etc.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ingest.services import upload_create, upload_ingest
from perfdb.models import Metric, Run, Setup, Upload
from tests.bundles import make_bundle, volano_log

HOSTILE = "<script>alert('pwn')</script>&"
HOSTILE_PATCH = "<img src=x onerror=alert(1)>"

# (kernel, patches, label, throughputs of trials 1.., discard first trial)
SERIES = (
    ("2.4.20", (), "Base1", (12000, 12100, 11900), False),
    ("2.5.25", (), "", (9000, 13000, 13200, 13100), True),
    ("2.5.25", ("pri_preempt",), "", (14000, 14300, 14100), False),
    ("2.3.99-pre3", (), "", (10000,), False),
)
ROOMS = (5, 10, 20)  # scaling: runs on 2.5.25 stock and 2.4.20 stock at these room counts
SCALING = {"2.4.20": (12500, 12000, 10400), "2.5.25": (13500, 13100, 12900)}
# (server nice, client nice, threshold, msg/s, wakeup calls "M", preemption %)
WAKEUPS = (
    (0, 0, 0, 13183, "3.49 M", "28.4 %"),
    (0, -19, 0, 13881, "4.42 M", "86.6 %"),
    (-19, 0, 0, 12000, "3.10 M", "10.0 %"),
    (0, 0, 40, 13500, "3.20 M", "20.0 %"),
    (0, -19, 40, 14000, "4.00 M", "50.0 %"),
    (-19, 0, 40, 12500, "3.00 M", "5.0 %"),
)

READPROFILE = """ {total} total                                    0.02
  {idle} default_idle                             110.48
  {sched} schedule                                 1.52
   822 csum_partial_copy_generic                  3.31
   799 send_sig_info                            4.54
   744 save_i387                                1.29
   511 tcp_v4_rcv                               0.31
"""

VMSTAT = """procs -----------memory---------- ---swap-- -----io---- --system-- ------cpu-----
 r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa
 1  0      0 500000  10000 200000    0    0     5     7  100  200  5  2 93  0
{rows}"""


def vmstat_text(base: int) -> str:
    rows = "\n".join(
        f" {base + i}  0      0 {490000 - i * 1000}  10000 200000    0    0     0     3 "
        f"{1000 + 10 * i} {15000 + base * 100 + i * 50} 70 20 10  0"
        for i in range(6)
    )
    return VMSTAT.format(rows=rows)


def _run(
    kernel: str,
    patches: tuple[str, ...],
    params: str,
    files: list[str],
    label: str = "",
    notes: str = "",
    discard: bool = False,
) -> str:
    patch_list = ", ".join(f'"{p}"' for p in patches)
    return f"""
[[run]]
workload = "VolanoMark"
workload_version = "2.1.2"
kernel = "{kernel}"
patches = [{patch_list}]
hardware = "P8"
mode = "UP"
label = "{label}"
params = {{ {params} }}
discard_first_trial = {str(discard).lower()}
files = [{", ".join(files)}]
notes = "{notes}"
"""


def _file(path: str, parser: str, trial: int | None = None) -> str:
    trial_part = f", trial = {trial}" if trial else ""
    return f'{{ path = "{path}", parser = "{parser}"{trial_part} }}'


def dashboard_bundle(path: Path) -> Path:
    files: dict[str, str | bytes] = {}
    runs: list[str] = []
    base_params = "rooms = 10, messages = 1000"
    for i, (kernel, patches, label, values, discard) in enumerate(SERIES):
        names = []
        for trial, value in enumerate(values, start=1):
            name = f"s{i}/t{trial}.log"
            files[name] = volano_log(value)
            names.append(_file(name, "volanomark", trial))
        files[f"s{i}/profile.txt"] = READPROFILE.format(
            total=20000 + 1000 * i, idle=8000 - 500 * i, sched=2000 + 300 * i
        )
        names.append(_file(f"s{i}/profile.txt", "readprofile"))
        files[f"s{i}/vmstat.txt"] = vmstat_text(i + 1)
        names.append(_file(f"s{i}/vmstat.txt", "vmstat"))
        notes = HOSTILE if i == 0 else ""
        runs.append(_run(kernel, patches, base_params, names, label, notes, discard))
    for kernel, values in SCALING.items():
        for rooms, value in zip(ROOMS, values, strict=True):
            if rooms == 10:
                continue  # the series above already has rooms = 10
            name = f"scale/{kernel}-{rooms}.log"
            files[name] = volano_log(value)
            runs.append(
                _run(kernel, (), f"rooms = {rooms}, messages = 1000", [_file(name, "volanomark")])
            )
    for j, (server, client, threshold, msgs, calls, pct) in enumerate(WAKEUPS):
        files[f"w{j}.log"] = volano_log(msgs)
        files[f"w{j}.txt"] = f"try_to_wake_up calls: {calls}\npriority preemptions: {pct}\n"
        params = (
            f"rooms = 10, messages = 1000, server_nice = {server}, client_nice = {client}, "
            f"preempt_threshold = {threshold}"
        )
        wfiles = [_file(f"w{j}.log", "volanomark"), _file(f"w{j}.txt", "wakeup-counters")]
        runs.append(_run("2.5.25", (HOSTILE_PATCH,), params, wfiles))
    manifest = """format = 1
[hardware.P8]
cpus = 8
cpu = "Pentium III"
mhz = 700
""" + "\n".join(runs)
    files["manifest.toml"] = manifest
    return make_bundle(path, files)


def ingest(path: Path) -> Upload:
    with open(path, "rb") as stream:
        upload, _ = upload_create(stream=stream, filename=path.name, source="cli")
    upload_ingest(upload_id=upload.pk)
    upload.refresh_from_db()
    assert upload.status == "done", upload.error
    return upload


@dataclass(frozen=True)
class Loaded:
    upload: Upload

    def run(self, kernel: str, patches: str = "", **params: object) -> Run:
        """The run of this kernel build whose params include ``params`` (rooms=10 default)."""
        params = {"rooms": 10, **params}
        runs = Run.objects.filter(
            pk__in=self.upload.run_ids, kernel__version=kernel, patch_set__name=patches
        ).select_related("setup")
        matches = [
            r
            for r in runs
            if all(r.setup.params.get(k) == v for k, v in params.items())
            and ("server_nice" in r.setup.params) == ("server_nice" in params)
        ]
        assert len(matches) == 1, (kernel, patches, params, matches)
        return matches[0]


def load(tmp_path: Path) -> Loaded:
    return Loaded(ingest(dashboard_bundle(tmp_path / "dash.tar.gz")))


def kept(values: tuple[int, ...], discard: bool) -> list[int]:
    """A row of ``SERIES``'s values as stored: without its warm-up when it is discarded."""
    return list(values[1:] if discard else values)


def throughput_id() -> int:
    return Metric.objects.get(name="throughput").pk


def base_setup() -> Setup:
    """The 10-room VolanoMark setup: the series every across-kernels test reads."""
    return Setup.objects.get(params={"rooms": 10, "messages": 1000})


def throughput() -> dict:
    """The throughput metric as the selectors take it: id, name, unit and which way is better."""
    m = Metric.objects.get(name="throughput")
    return {"id": m.pk, "name": m.name, "unit": m.unit, "better": m.better}


def setup_ids() -> list[int]:
    """Every stored setup's id: the one scope the dashboard data fills."""
    return list(Setup.objects.values_list("id", flat=True))
