# Written by hand (makemigrations would also have picked up another engineer's model changes
# in progress): one index for the overview's newest run of each setup.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("perfdb", "0004_sample_columns"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="run",
            index=models.Index(fields=["setup", "-created_at", "-id"], name="run_setup_recent_idx"),
        ),
    ]
