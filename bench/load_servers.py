"""bench/load.py's servers: gunicorn and the Celery workers as docker-compose runs them."""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from _common import ROOT


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(port: int, tmp: Path, args: argparse.Namespace) -> dict[str, str]:
    env = {
        **os.environ,
        "DEBUG": "0",
        "SECRET_KEY": "bench-load-only",
        "SECURE_SSL_REDIRECT": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "MEDIA_ROOT": str(tmp / "media"),
        "STATIC_ROOT": str(tmp / "static"),
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        # One address for 60 clients: the per-address API throttles would refuse them.
        "API_THROTTLE_ANON": "1000000/min",
        "API_THROTTLE_USER": "1000000/min",
        "LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
    }
    if args.celery != "all:2":  # split queues, as docker-compose routes them
        env.update(
            CELERY_INGEST_QUEUE="ingest",
            CELERY_DETECTION_QUEUE="detection",
            CELERY_EMAIL_QUEUE="email",
            CELERY_PAGES_QUEUE="pages",
        )
    if args.workers:
        env["WEB_CONCURRENCY"] = str(args.workers)
    if args.threads:
        env["GUNICORN_THREADS"] = str(args.threads)
    return env


def celery_commands(spec: str) -> list[list[str]]:
    """``"all:2"`` → one worker on every queue with 2 processes; ``"ingest:2,detection:1"``
    → a worker per queue, as docker-compose's split workers; ``"pages:1:10"`` → at nice 10."""
    out = []
    for n, part in enumerate(spec.split(",")):
        queues, _, rest = part.partition(":")
        concurrency, _, nice = rest.partition(":")
        command = ["nice", "-n", nice] if nice else []
        command += [sys.executable, "-m", "celery", "-A", "config", "worker"]
        command += ["--concurrency", concurrency or "1", "-n", f"bench{n}@%h", "-l", "WARNING"]
        if queues != "all":
            command += ["-Q", queues.replace("+", ",")]
        out.append(command)
    return out


def start_servers(env: dict[str, str], tmp: Path, celery: str) -> list[subprocess.Popen]:
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    commands = [[sys.executable, "-m", "gunicorn", "-c", "config/gunicorn.conf.py"]]
    commands[0].append("config.wsgi:application")
    commands += celery_commands(celery)
    procs = []
    for n, command in enumerate(commands):
        log = open(tmp / f"proc{n}.log", "w")  # noqa: SIM115 (closed with the process)
        procs.append(subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log))
    return procs


def stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def wait_until_up(base: str, limit: float = 240) -> None:
    """Until gunicorn answers: on a loaded machine, importing the app (scipy among it) in
    each process can take a minute."""
    deadline = time.time() + limit
    while time.time() < deadline:
        try:
            urllib.request.urlopen(base + "/healthz", timeout=5).read()
            return
        except OSError:  # refused, reset or timed out while gunicorn starts
            time.sleep(0.5)
    raise RuntimeError("gunicorn did not answer")


# --- what the users open ----------------------------------------------------------------


def _proc_stats() -> dict[int, list[str]]:
    """Each live process's /proc/PID/stat fields after its name (state, ppid, ...)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                out[int(entry.name)] = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
    return out


def _cpu_of_tree(root: int, stats: dict[int, list[str]]) -> float:
    """CPU seconds (user + system) of a process and its descendants, those alive now and
    those already reaped (each process's cutime and cstime): gunicorn replaces a worker
    after GUNICORN_MAX_REQUESTS, PostgreSQL's backends end with their connections, and
    counting only the live ones had left most of a run's CPU out."""
    ticks = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    for pid, fields in stats.items():
        children.setdefault(int(fields[1]), []).append(pid)
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            total += sum(int(f) for f in stats[pid][11:15]) / ticks
        todo += children.get(pid, [])
    return total


def _postmaster(stats: dict[int, list[str]]) -> int:
    """The PostgreSQL server's main process (a ``postgres`` whose parent is not one), or 0."""

    def is_postgres(pid: int) -> bool:
        try:
            return Path(f"/proc/{pid}/comm").read_text().strip() in ("postgres", "postmaster")
        except OSError:
            return False

    for pid, fields in stats.items():
        if is_postgres(pid) and not is_postgres(int(fields[1])):
            return pid
    return 0


def machine_cpu() -> tuple[float, float]:
    """Busy and total CPU seconds of the whole machine so far (/proc/stat, all cores)."""
    ticks = os.sysconf("SC_CLK_TCK")
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / ticks, sum(values[:8]) / ticks


def cpu_now(procs: list[subprocess.Popen]) -> dict[str, float]:
    """CPU seconds so far of the web server (gunicorn and its workers), the Celery workers,
    the PostgreSQL server (every backend, of any database), this load generator and the
    whole machine: their difference over a run, divided by the requests served, is a cost
    per request that the machine's other load does not inflate."""
    stats = _proc_stats()
    busy, total = machine_cpu()
    workers = {f"celery {n}": _cpu_of_tree(p.pid, stats) for n, p in enumerate(procs[1:])}
    postmaster = _postmaster(stats)
    return {
        "client": time.process_time(),  # this bench's own threads: the load generator
        "web": _cpu_of_tree(procs[0].pid, stats),
        "celery": sum(workers.values()),
        **workers,
        "postgres": _cpu_of_tree(postmaster, stats) if postmaster else 0.0,
        "machine busy": busy,
        "machine": total,
    }
