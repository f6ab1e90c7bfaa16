"""The command-line ways in: manage.py upload_bundle and the stdlib uploader script."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from ingest.manifest import Manifest, parse_manifest
from ingest.parsers import get_parser
from ingest.plan import PlanError, file_key, plan_runs
from perfdb.kernels import patch_tree_split
from perfdb.models import Run
from tests.bundles import make_bundle, volano_bundle
from tests.conftest import ROOT
from tests.ingest.upload_script import SCRIPT, load_script

GNU_TIME = "/usr/bin/time"
needs_gnu_time = pytest.mark.skipif(not os.path.exists(GNU_TIME), reason="GNU time not installed")


@pytest.mark.django_db
def test_upload_bundle_ingests_here_and_prints_the_runs(tmp_path, capsys):
    call_command("upload_bundle", str(volano_bundle(tmp_path / "b.tar.gz")))
    out = capsys.readouterr().out
    run = Run.objects.get()
    assert "done" in out and f"/runs/{run.pk}/" in out


@pytest.mark.django_db
def test_upload_bundle_fails_loudly(tmp_path):
    bad = make_bundle(tmp_path / "bad.tar.gz", {"manifest.toml": "format = 9\n"})
    with pytest.raises(CommandError, match="1 bundle"):
        call_command("upload_bundle", str(bad))
    assert not Run.objects.exists()
    with pytest.raises(CommandError, match="no such file"):
        call_command("upload_bundle", str(tmp_path / "missing.tar.gz"))


def script(*args, cwd: Path | None = None, env: dict[str, str] | None = None):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO", "PERFDB_"))}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**clean, **(env or {})},
        cwd=cwd,
    )


def uploader(server: str, token: str, *paths) -> subprocess.CompletedProcess:
    return script("--server", server, "--token", token, *paths)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_lab_uploader_waits_and_prints_run_urls(tmp_path, live_server, celery_worker, token):
    good = volano_bundle(tmp_path / "good.tar.gz")
    result = uploader(live_server.url, token, good)
    assert result.returncode == 0, result.stdout + result.stderr
    run = Run.objects.get()
    assert f"/runs/{run.pk}/" in result.stdout and "/uploads/" in result.stdout
    assert "/api/" not in result.stdout  # page URLs, not API URLs
    bad = make_bundle(tmp_path / "bad.tar.gz", {"manifest.toml": "format = 9\n"})
    result = uploader(live_server.url, token, bad)
    assert result.returncode == 1 and "FAILED" in result.stdout and "supported" in result.stdout
    assert uploader(live_server.url, "wrong-token", good).returncode == 1


# --- capture mode: perfdb-upload run -------------------------------------------------------


def kept_bundle(folder: Path) -> Path:
    (bundle,) = folder.glob("*.tar.gz")
    return bundle


def read_bundle(bundle: Path) -> tuple[Manifest, dict[str, str]]:
    """Check the bundle as the server does: the manifest, then every file with its parser."""
    with tarfile.open(bundle) as tar:
        files = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers()}
    text = files.pop("manifest.toml")
    manifest = parse_manifest(text, filename="manifest.toml", available_files=list(files))
    parsed = {
        file_key(spec.path, spec.parser, spec.options): get_parser(spec.parser)(
            files[spec.path], dict(spec.options)
        )
        for spec in manifest.runs[0].files
    }
    (planned,) = plan_runs(manifest, parsed)  # one run, every file's records taken
    assert len(planned.parts) == len(manifest.runs[0].files)
    return manifest, files


@needs_gnu_time
def test_run_dry_run_writes_a_bundle_the_server_can_read(tmp_path):
    result = script(
        "run",
        "--workload",
        "true-time",
        "--trials",
        "2",
        "--param",
        "fs=ext4",
        "--param",
        "clients=4",
        "--patches",
        "mm1,sched-fix",
        "--vmstat",
        "--keep",
        tmp_path / "kept",
        "--dry-run",
        "--",
        GNU_TIME,
        "-v",
        "true",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    bundle = kept_bundle(tmp_path / "kept")
    assert f"bundle: {bundle}" in result.stdout and "[[run]]" in result.stdout
    manifest, files = read_bundle(bundle)
    (run,) = manifest.runs
    assert run.workload == "true-time" and run.patches == ("mm1", "sched-fix")
    assert run.kernel == os.uname().release
    assert run.mode == ("SMP" if os.cpu_count() > 1 else "UP")  # CPUs online
    assert run.params == {"command": f"{GNU_TIME} -v true", "fs": "ext4", "clients": 4}
    assert run.hardware == os.uname().nodename.split(".")[0]
    hardware = manifest.hardware[run.hardware]
    assert hardware.cpus >= 1 and hardware.memory_mb % 1024 == 0
    assert [(f.path, f.parser, f.trial) for f in run.files] == [
        ("trial1.log", "time", 1),
        ("trial1.vmstat", "vmstat", 1),
        ("trial2.log", "time", 2),
        ("trial2.vmstat", "vmstat", 2),
    ]
    assert "Command being timed" in files["trial2.log"]


def test_run_with_dbench_and_schedstat_snapshots(tmp_path, monkeypatch, capsys):
    """In-process, so /proc/schedstat can be a real v15 dump on kernels without schedstats."""
    if not shutil.which("dbench"):
        pytest.skip("dbench not installed (apt-get install dbench)")
    cli = load_script()
    fixture = ROOT / "tests/fixtures/formats/schedstat"
    fake = fixture / "prometheus-procfs-fixture-proc-schedstat-v15.txt"
    monkeypatch.setattr(cli, "SCHEDSTAT", str(fake))
    monkeypatch.chdir(tmp_path)
    argv = ["run", "--workload", "dbench", "--hardware", "box", "--kernel", "6.1.0-stock"]
    argv += ["--schedstat", "--dry-run", "--quiet", "--", "dbench", "-t", "1", "1"]
    assert cli.main(argv) == 0, capsys.readouterr()
    manifest, files = read_bundle(kept_bundle(tmp_path / "perfdb-bundles"))
    (run,) = manifest.runs
    assert run.kernel == "6.1.0" and run.hardware == "box" and run.patches == ()
    assert [(f.path, f.parser) for f in run.files] == [
        ("trial1.log", "dbench"),
        ("trial1.schedstat", "schedstat"),
    ]
    snapshots = get_parser("schedstat")(files["trial1.schedstat"], {})
    assert snapshots.metadata["snapshots"] == 2  # before and after: the parser takes the delta
    assert "Throughput" in files["trial1.log"]


def test_run_takes_one_of_several_records_with_select(tmp_path):
    """fio reports a job, each direction and each disk: --select picks the run's record;
    a mixed read/write job without it is refused with the keys named."""
    if not shutil.which("fio"):
        pytest.skip("fio not installed (apt-get install fio)")
    fio = ["fio", "--name=mix", "--rw=randrw", "--size=1m", f"--directory={tmp_path}"]
    fio.append("--output-format=json")
    base = ["run", "--workload", "fio-mix", "--dry-run", "--quiet", "--keep"]
    whole = script(*base, tmp_path / "all", "--", *fio, cwd=tmp_path)
    assert whole.returncode == 0, whole.stdout + whole.stderr
    with pytest.raises(PlanError, match="select = "):  # the server's error names the keys
        read_bundle(kept_bundle(tmp_path / "all"))
    select = ["--select", "job=mix", "--select", "direction=write"]
    one = script(*base, tmp_path / "one", *select, "--", *fio, cwd=tmp_path)
    assert one.returncode == 0, one.stdout + one.stderr
    manifest, _ = read_bundle(kept_bundle(tmp_path / "one"))
    (run,) = manifest.runs
    assert manifest.format == 2 and dict(run.files[0].select) == {
        "job": "mix",
        "direction": "write",
    }
    assert run.params == {"command": " ".join(fio), "job": "mix", "direction": "write"}


def test_one_fio_job_doing_one_kind_of_io_is_taken_without_flags(tmp_path):
    """A new user's first fio capture: one job reading. Its job and direction are the one
    run there is, taken as the flags would take them (the same series either way)."""
    if not shutil.which("fio"):
        pytest.skip("fio not installed (apt-get install fio)")
    fio = ["fio", "--name=seq", "--rw=read", "--size=1m", f"--directory={tmp_path}"]
    fio.append("--output-format=json")
    base = ["run", "--workload", "fio-seq", "--dry-run", "--quiet", "--trials", "2", "--keep"]
    alone = script(*base, tmp_path / "alone", "--", *fio, cwd=tmp_path)
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert "taking --select job=seq --select direction=read" in alone.stderr
    manifest, _ = read_bundle(kept_bundle(tmp_path / "alone"))
    (run,) = manifest.runs
    assert [dict(f.select) for f in run.files] == [{"job": "seq", "direction": "read"}] * 2
    flags = ["--select", "job=seq", "--select", "direction=read"]
    named = script(*base, tmp_path / "named", *flags, "--", *fio, cwd=tmp_path)
    assert named.returncode == 0, named.stdout + named.stderr
    (same,) = read_bundle(kept_bundle(tmp_path / "named"))[0].runs
    assert (
        run.params
        == same.params
        == {
            "command": " ".join(fio),
            "job": "seq",
            "direction": "read",
        }
    )


def test_a_capture_of_several_runs_is_told_which_flags_pick_one():
    """The server's plan error names a manifest's select; a capture is told --select."""
    manifest = parse_manifest(
        'format = 2\n[[run]]\nworkload = "fio"\nkernel = "6.1.0"\nhardware = "box"\n'
        'mode = "SMP"\nfiles = [{ path = "fio.json", parser = "fio" }]\n',
        filename="manifest.toml",
        available_files=["fio.json"],
    )
    text = (ROOT / "tests/fixtures/formats/fio/fio-3.33-two-jobs-json.json").read_text()
    result = get_parser("fio")(text, {})
    with pytest.raises(PlanError) as caught:
        plan_runs(manifest, {file_key("fio.json", "fio", {}): result})
    hint = load_script().capture_hint(str(caught.value))
    assert hint is not None and "select = " not in hint
    first = result.records[0].keys
    flags = " ".join(f"--select {k}={v}" for k, v in first.items())
    assert flags in hint


@pytest.mark.parametrize(
    ("command", "parser"),
    [
        (["dbench", "-t", "30", "4"], "dbench"),
        (["/usr/bin/tbench", "4", "localhost"], "tbench"),
        (["./fio", "--output-format=json", "job.fio"], "fio"),
        (["perf", "stat", "-r", "5", "hackbench"], "perf-stat"),
        (["perf", "--no-pager", "bench", "sched", "pipe"], "perf-bench"),
        (["perf", "report", "--stdio"], "perf-report"),
        (["perf", "record", "-a"], None),
        (["numactl", "-N", "0", "stress-ng", "--cpu", "2"], "stress-ng"),
        (["taskset", "-c", "1", "cyclictest", "-q"], "cyclictest"),
        (["/usr/bin/time", "-v", "make", "-j8"], "time"),
        (["ls", "dbench"], None),
    ],
)
def test_run_picks_the_parser_from_the_program(command, parser):
    assert load_script().parser_for(command) == parser


def test_hardware_fields_do_not_change_between_kernels():
    cli = load_script()
    # MemTotal of one 16 GiB machine on two kernels: the same hardware
    assert cli.memory_mb("MemTotal:       16303412 kB\n") == 16384
    assert cli.memory_mb("MemTotal:       16281196 kB\n") == 16384
    assert cli.nominal_mhz("Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz") == 2400
    assert cli.nominal_mhz("AMD EPYC 7763 64-Core Processor") is None  # cpu MHz varies: left out
    assert cli.cpu_list_count("0-3,6,8-9\n") == 7


def test_run_refuses_what_it_cannot_upload(tmp_path):
    no_parser = script("run", "--workload", "w", "--dry-run", "--", "ls", cwd=tmp_path)
    assert no_parser.returncode == 2 and "--parser" in no_parser.stderr
    no_server = script("run", "--workload", "w", "--", "dbench", "1", cwd=tmp_path)
    assert no_server.returncode == 2 and "PERFDB_SERVER" in no_server.stderr
    failed = script(
        "run", "--workload", "w", "--parser", "time", "--dry-run", "--", "false", cwd=tmp_path
    )
    assert failed.returncode == 1 and "exited with status 1; nothing uploaded" in failed.stderr
    assert not (tmp_path / "perfdb-bundles").exists()
    for output in (no_parser, no_server):  # refused before running anything
        assert "trial 1" not in output.stderr


@pytest.mark.django_db(transaction=True)
def test_run_checks_the_server_and_token_before_running_the_benchmark(tmp_path, live_server, token):
    marker = tmp_path / "ran"
    benchmark = ["--", "sh", "-c", f"touch {marker}"]
    common = ["run", "--workload", "w", "--parser", "time"]
    refused = script(
        *common, "--server", live_server.url, "--token", "not-a-token", *benchmark, cwd=tmp_path
    )
    assert refused.returncode == 1
    assert "refused the token" in refused.stderr and "nothing was run" in refused.stderr
    unreachable = script(
        *common, "--server", "http://127.0.0.1:9", "--token", token, *benchmark, cwd=tmp_path
    )
    assert unreachable.returncode == 1 and "cannot reach" in unreachable.stderr
    assert not marker.exists()  # the benchmark never ran
    assert not (tmp_path / "perfdb-bundles").exists()


@needs_gnu_time
@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_two_kernels_captured_on_one_machine_make_one_series(
    tmp_path, live_server, celery_worker, token
):
    command = ["--", GNU_TIME, "-v", "true"]
    common = ["run", "--workload", "cli-true", "--hardware", "lab1", "--trials", "2"]
    first = script(
        *common,
        "--kernel",
        "6.1.0",
        "--server",
        live_server.url,
        "--token",
        token,
        *command,
        cwd=tmp_path,
    )
    assert first.returncode == 0, first.stdout + first.stderr
    env = {"PERFDB_SERVER": live_server.url, "PERFDB_TOKEN": token}
    second = script(*common, "--kernel", "6.2.0", *command, cwd=tmp_path, env=env)
    assert second.returncode == 0, second.stdout + second.stderr
    runs = list(Run.objects.order_by("pk"))
    assert len(runs) == 2 and runs[0].setup_id == runs[1].setup_id  # one series
    for result, run in zip((first, second), runs, strict=True):
        assert f"{live_server.url}/runs/{run.pk}/" in result.stdout
        assert f"{live_server.url}/uploads/{run.upload_id}/" in result.stdout
        assert "/api/" not in result.stdout
    assert len(list((tmp_path / "perfdb-bundles").glob("*.tar.gz"))) == 2
    from django.test import Client

    listed = Client().get("/api/runs/", {"workload": "cli-true"}).json()["results"]
    assert sorted(r["kernel"] for r in listed) == ["6.1.0", "6.2.0"]
    keys = {(r["hardware"], r["mode"], tuple(sorted(r["params"].items()))) for r in listed}
    assert keys == {("lab1", runs[0].setup.mode, (("command", f"{GNU_TIME} -v true"),))}
    detail = Client().get(f"/api/runs/{runs[1].pk}/").json()
    assert len(detail["results"]["elapsed_s"]["values"]) == 2  # two trials


@pytest.mark.parametrize(
    "release, kernel, patches",
    [
        ("6.6.15-rt22", "6.6.15", ["rt22"]),
        ("2.6.23-rc2-mm2-mem-v6", "2.6.23-rc2", ["mm2", "mem-v6"]),
        ("6.1.0-18-amd64", "6.1.0-18-amd64", []),
        ("6.1.0-18-rt-amd64", "6.1.0-18-rt-amd64", []),
    ],
)
def test_perfdb_upload_run_records_uname_in_the_canonical_form(release, kernel, patches):
    assert load_script().kernel_and_tree(release) == (kernel, patches)
    if patches:  # the server agrees with the script on what a tree is
        assert patch_tree_split(release) == (kernel, tuple(patches))


# A sysbench that prints, trial after trial, the new user's events/s: 348 +- 17 on 6.1.0, then
# 191 +- 27, 140 and 144 (the series that once raised no alert and sent no email).
FAKE_SYSBENCH = '''#!/usr/bin/env python3
import json, pathlib, sys
state = pathlib.Path(sys.argv[1])
values = json.loads(state.read_text())
value = values.pop(0)
state.write_text(json.dumps(values))
events = round(value * 10)
print(f"""sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 2
Initializing random number generator from current time


Prime numbers limit: 10000

Initializing worker threads...

Threads started!

CPU speed:
    events per second:  {value:.2f}

General statistics:
    total time:                          10.0003s
    total number of events:              {events}

Latency (ms):
         min:                                    0.22
         avg:                                    0.24
         max:                                   12.64
         95th percentile:                        0.25
         sum:                                 3991.28

Threads fairness:
    events (avg/stddev):           {events / 2:.4f}/75.50
    execution time (avg/stddev):   1.9956/0.00
""")
'''


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_new_users_sysbench_captures_email_the_regression_with_the_second_kernel(
    tmp_path, live_server, celery_worker, smtp_server, user, token
):
    """Four kernels captured with ``perfdb-upload run``, three trials each, one upload per
    kernel, as a new user does: the -45 % is emailed with the 6.2.0 upload, and the worse
    kernels after it keep the alert confirmed."""
    import json
    import time

    from perfdb.models import Alert
    from tests.conftest import wait_for_worker_idle
    from tests.factories import SubscriptionFactory

    _, handler = smtp_server
    handler.messages.clear()
    SubscriptionFactory(user=user, email="lab@lab.example", workload_pattern="sysbench*")
    fake = tmp_path / "sysbench"
    fake.write_text(FAKE_SYSBENCH)
    fake.chmod(0o755)
    state = tmp_path / "values.json"
    trials = {
        "6.1.0": [351.0, 329.5, 364.0],
        "6.2.0": [191.0, 165.0, 218.0],
        "6.3.0": [140.5, 131.0, 149.0],
        "6.4.0": [144.0, 139.5, 149.5],
    }
    env = {"PERFDB_SERVER": live_server.url, "PERFDB_TOKEN": token}
    subjects: dict[str, list[str]] = {}
    printed: dict[str, str] = {}
    for kernel, values in trials.items():
        state.write_text(json.dumps(values))
        common = ["run", "--workload", "sysbench-cpu", "--hardware", "lab1", "--trials", "3"]
        done = script(
            *common, "--kernel", kernel, "--quiet", "--", fake, state, cwd=tmp_path, env=env
        )
        assert done.returncode == 0, done.stdout + done.stderr
        printed[kernel] = done.stdout
        wait_for_worker_idle()
        deadline = time.time() + 10
        while time.time() < deadline and kernel == "6.2.0" and not handler.messages:
            time.sleep(0.2)  # the email task runs after the check
        subjects[kernel] = [m["Subject"] for m in handler.messages]
        handler.messages.clear()
    assert subjects["6.1.0"] == []
    (mail,) = subjects["6.2.0"]
    assert "regression" in mail and "sysbench-cpu" in mail and "6.2.0" in mail
    alert = Alert.objects.get(metric__name="events_per_s", candidate_run__kernel__version="6.2.0")
    assert alert.direction == "regression" and alert.status == "untriaged"
    assert alert.change_pct == pytest.approx((191.333 - 348.167) / 348.167 * 100, abs=0.01)
    # the script waited for the check and printed what it found, as the email says it
    assert "regression check: nothing moved against the runs' baselines" in printed["6.1.0"]
    assert "regression check: 1 regression, 0 improvements, 0 pending" in printed["6.2.0"]
    line = f"REGRESSION events_per_s {alert.change_pct:+.1f} %: sysbench-cpu on lab1, 6.2.0: "
    assert line + f"{live_server.url}/alerts/{alert.pk}/" in printed["6.2.0"]
