"""Kernel sort keys read the numbers of a suffix as numbers (6.1.0-9-amd64 before
6.1.0-18-amd64) and know ``+`` local builds and ``git describe`` counts: every stored key is
computed again from its version (perfdb/kernels/versions.py, docs/kernels.md)."""

from django.db import migrations


def recompute(apps, schema_editor):  # type: ignore[no-untyped-def]
    from perfdb.kernels import parse_kernel

    Kernel = apps.get_model("perfdb", "Kernel")
    changed = []
    for kernel in Kernel.objects.all().only("pk", "version", "sort_key"):
        key = list(parse_kernel(kernel.version).sort_key)
        if key != list(kernel.sort_key):
            kernel.sort_key = key
            changed.append(kernel)
    Kernel.objects.bulk_update(changed, ["sort_key"], batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [("perfdb", "0017_alert_placed_through_run")]

    operations = [migrations.RunPython(recompute, migrations.RunPython.noop)]
