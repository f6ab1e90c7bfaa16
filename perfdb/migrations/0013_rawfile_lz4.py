from django.db import migrations

# A raw file (a 10 MB vmstat log) is compressed when stored (TOAST); PostgreSQL's default,
# pglz, took most of the database's CPU of storing it (docs/performance.md
# "Ingest"); lz4 compresses text a little less, several times faster. Only values written
# from now on use it (ALTER ... SET COMPRESSION rewrites nothing, takes a brief lock). A
# server built without lz4 keeps pglz: the statement is skipped, nothing else changes.
LZ4 = """
DO $$
BEGIN
    ALTER TABLE perfdb_rawfile ALTER COLUMN content SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 not built into this server: raw files stay pglz-compressed';
END $$;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("perfdb", "0012_sample_source_run_index"),
    ]

    operations = [
        migrations.RunSQL(
            LZ4,
            reverse_sql="ALTER TABLE perfdb_rawfile ALTER COLUMN content SET COMPRESSION pglz;",
        ),
    ]
