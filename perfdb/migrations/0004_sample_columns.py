# Time series move from one row per value to one row per column (arrays); see
# perfdb/timeseries.py. Series stored before this are dropped: re-ingest their bundles.

import django.contrib.postgres.fields
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("perfdb", "0003_run_recent_idx"),
    ]

    operations = [
        migrations.DeleteModel(name="Sample"),
        migrations.CreateModel(
            name="Sample",
            fields=[
                ("id", models.BigAutoField(primary_key=True, serialize=False)),
                ("trial", models.PositiveSmallIntegerField(default=0)),
                ("source", models.CharField(max_length=30)),
                ("column", models.CharField(max_length=60)),
                (
                    "values",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.FloatField(), size=None
                    ),
                ),
                (
                    "indexes",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.IntegerField(), blank=True, null=True, size=None
                    ),
                ),
                ("first_is_since_boot", models.BooleanField(default=False)),
                (
                    "timestamps",
                    django.contrib.postgres.fields.ArrayField(
                        base_field=models.CharField(max_length=40),
                        blank=True,
                        default=list,
                        size=None,
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="samples",
                        to="perfdb.run",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("run", "trial", "source", "column"), name="sample_column_uniq"
                    )
                ],
            },
        ),
    ]
