"""Kernels named by git (a commit, a linux-next tag): what uploads state about one (tree,
describe, base, commit time, subject; perfdb/kernels/commits.py). And every stored key computed
again: a ``git describe`` part anywhere in a suffix now counts its commits and never its
hash's digits (``6.9.0-rc1-next-20240410-12-g5ef2dccfcc``, ``…-00045-g5ef2dccfcc-dirty``;
perfdb/kernels/versions.py, docs/kernels.md)."""

import django.db.models.deletion
from django.db import migrations, models


def recompute(apps, schema_editor):  # type: ignore[no-untyped-def]
    from perfdb.kernels import parse_kernel

    Kernel = apps.get_model("perfdb", "Kernel")
    changed = []
    for kernel in Kernel.objects.all().only("pk", "version", "sort_key"):
        key = list(parse_kernel(kernel.version).sort_key)  # only versions are stored yet
        if key != list(kernel.sort_key):
            kernel.sort_key = key
            changed.append(kernel)
    Kernel.objects.bulk_update(changed, ["sort_key"], batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [
        ("perfdb", "0019_result_summary"),
    ]

    operations = [
        migrations.AddField(
            model_name="kernel",
            name="base",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="based",
                to="perfdb.kernel",
            ),
        ),
        migrations.AddField(
            model_name="kernel",
            name="committed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="kernel",
            name="describe",
            field=models.CharField(blank=True, max_length=100),
        ),
        migrations.AddField(
            model_name="kernel",
            name="subject",
            field=models.CharField(blank=True, max_length=300),
        ),
        migrations.AddField(
            model_name="kernel",
            name="tree",
            field=models.CharField(blank=True, max_length=100),
        ),
        migrations.AddConstraint(
            model_name="kernel",
            constraint=models.CheckConstraint(
                condition=models.Q(("base", models.F("id")), _negated=True),
                name="kernel_base_other",
            ),
        ),
        migrations.RunPython(recompute, migrations.RunPython.noop),
    ]
