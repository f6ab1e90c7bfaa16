"""Stored numbers are finite, in the database itself (no write path may
store a NaN). Ingest refuses a file with a value that is not finite, naming it
(``ingest.parsers.base.finite_only``); these CHECKs hold for every other writer too (the admin,
a shell, a script). Adding them reads each table once; a database that already holds a NaN or
an infinity stops here with the constraint's name: find the rows with
``SELECT * FROM perfdb_result WHERE NOT (value > '-Infinity' AND value < 'Infinity')``."""

from django.db import migrations, models

# A time series column's values (and its chart preview) hold no NaN or infinity. Not a Django
# constraint: Q cannot say "no element of the array"; written in SQL, kept out of the model.
SAMPLES_FINITE = """
ALTER TABLE perfdb_sample ADD CONSTRAINT sample_values_finite CHECK (
    NOT ('NaN'::float8 = ANY(values) OR 'Infinity'::float8 = ANY(values)
         OR '-Infinity'::float8 = ANY(values)
         OR 'NaN'::float8 = ANY(preview) OR 'Infinity'::float8 = ANY(preview)
         OR '-Infinity'::float8 = ANY(preview))
);
"""


class Migration(migrations.Migration):
    dependencies = [
        ("perfdb", "0015_setup_summary"),
    ]

    operations = [
        migrations.AddConstraint(
            model_name="metric",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("resolution__isnull", True),
                    models.Q(("resolution__gt", 0), ("resolution__lt", float("inf"))),
                    _connector="OR",
                ),
                name="metric_resolution_positive",
            ),
        ),
        migrations.AddConstraint(
            model_name="profileentry",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("ticks__gt", float("-inf")),
                    ("ticks__lt", float("inf")),
                    models.Q(
                        ("load__isnull", True),
                        models.Q(("load__gt", float("-inf")), ("load__lt", float("inf"))),
                        _connector="OR",
                    ),
                    models.Q(
                        ("share_pct__isnull", True),
                        models.Q(("share_pct__gt", float("-inf")), ("share_pct__lt", float("inf"))),
                        _connector="OR",
                    ),
                ),
                name="profile_finite",
            ),
        ),
        migrations.AddConstraint(
            model_name="result",
            constraint=models.CheckConstraint(
                condition=models.Q(("value__gt", float("-inf")), ("value__lt", float("inf"))),
                name="result_value_finite",
            ),
        ),
        migrations.RunSQL(
            SAMPLES_FINITE,
            "ALTER TABLE perfdb_sample DROP CONSTRAINT sample_values_finite;",
        ),
    ]
