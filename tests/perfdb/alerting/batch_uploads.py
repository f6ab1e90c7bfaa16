"""The four uploads the batched-check tests ingest into a family of set-ups (same values,
other hardware), and the series an upload touched (a helper, not a test module)."""

from __future__ import annotations

from ingest.services import upload_create, upload_ingest
from perfdb.models import Result, Run, Upload
from tests.bundles import make_bundle, volano_log, volano_run

HIGH, LOW = (13000, 13100, 12950, 13050), (11000, 11100, 11050, 10980)
ONE = [(13000,), (13080,), (12960,), (13040,)]  # one trial a kernel: a move waits for the next
# Per upload: (kernel, patches, values on each of the three setups).
UPLOADS = [
    [
        (k, "[]", HIGH, one, one)
        for k, one in zip(("2.4.17", "2.4.18", "2.4.19", "2.4.20"), ONE, strict=True)
    ]
    + [("2.4.20", '["O(1)"]', (11650, 11700, 11600, 11720), (13010,), (13020,))],
    [("2.5.59", "[]", LOW, (11000,), (11000,))],
    [("2.5.60", "[]", LOW, (13030,), (11020,))],
    [("2.5.61", "[]", HIGH, (12990,), (11010,))],
]


def ingest(tmp_path, family: str, n: int, runs) -> Upload:
    """One upload with each run on both setups of the family (hardware <family>1, <family>2)."""
    files: dict[str, str | bytes] = {}
    blocks = []
    for r, (kernel, patches, *per_setup) in enumerate(runs):
        for h, values in enumerate(per_setup, start=1):
            entries = []
            for t, value in enumerate(values, start=1):
                name = f"r{r}h{h}/t{t}.log"
                files[name] = volano_log(value)
                entries.append(f'{{ path = "{name}", parser = "volanomark", trial = {t} }}')
            run = volano_run(kernel, patches=patches, files=", ".join(entries))
            blocks.append(run.replace('hardware = "P8"', f'hardware = "{family}{h}"'))
    files["manifest.toml"] = (
        "format = 1\n"
        + "".join(
            f'[hardware.{family}{h}]\ncpus = 8\ncpu = "Pentium III"\nmhz = 700\n' for h in (1, 2, 3)
        )
        + "\n".join(blocks)
    )
    path = make_bundle(tmp_path / f"{family}{n}.tar.gz", files)
    with open(path, "rb") as stream:
        upload, _ = upload_create(stream=stream, filename=path.name)
    upload_ingest(upload_id=upload.pk)
    upload.refresh_from_db()
    assert upload.status == "done", upload.error
    return upload


def touched(upload: Upload) -> list[tuple[int, int]]:
    runs = Run.objects.filter(upload=upload)
    return sorted(set(Result.objects.filter(run__in=runs).values_list("setup_id", "metric_id")))
