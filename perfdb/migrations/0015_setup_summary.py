"""perfdb_setupsummary and the triggers that keep it (perfdb/models/summaries.py), filled
from the runs already stored (~2 s at 10M results)."""

import django.db.models.deletion
from django.db import migrations, models

# Every setup in ``setups`` summarised again from its runs (an update that moves runs).
RECOMPUTE = """
CREATE FUNCTION perfdb_summary_recompute(setups bigint[]) RETURNS void
LANGUAGE sql AS $$
  DELETE FROM perfdb_setupsummary WHERE setup_id = ANY(setups);
  INSERT INTO perfdb_setupsummary (setup_id, run_count, newest_run_id, newest_at, profiled_runs)
  SELECT r.setup_id, count(*), (array_agg(r.id ORDER BY r.created_at DESC, r.id DESC))[1],
         max(r.created_at),
         count(*) FILTER (WHERE EXISTS (SELECT 1 FROM perfdb_profileentry e WHERE e.run_id = r.id))
  FROM perfdb_run r WHERE r.setup_id = ANY(setups)
  GROUP BY r.setup_id ORDER BY r.setup_id;
$$;
"""

RUNS_ADDED = """
CREATE FUNCTION perfdb_summary_runs_added() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO perfdb_setupsummary AS s (setup_id, run_count, newest_run_id, newest_at, profiled_runs)
  SELECT n.setup_id, count(*), (array_agg(n.id ORDER BY n.created_at DESC, n.id DESC))[1],
         max(n.created_at),
         count(*) FILTER (WHERE EXISTS (SELECT 1 FROM perfdb_profileentry e WHERE e.run_id = n.id))
  FROM added n GROUP BY n.setup_id ORDER BY n.setup_id
  ON CONFLICT (setup_id) DO UPDATE SET
    run_count = s.run_count + EXCLUDED.run_count,
    profiled_runs = s.profiled_runs + EXCLUDED.profiled_runs,
    newest_run_id = CASE WHEN (EXCLUDED.newest_at, EXCLUDED.newest_run_id) > (s.newest_at, s.newest_run_id)
                         THEN EXCLUDED.newest_run_id ELSE s.newest_run_id END,
    newest_at = GREATEST(s.newest_at, EXCLUDED.newest_at);
  RETURN NULL;
END $$;
"""

# A run's profile entries may still be stored when it is removed (the foreign keys are
# deferred): it is counted off here, and the entries' own removal then finds no run.
RUNS_REMOVED = """
CREATE FUNCTION perfdb_summary_runs_removed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE perfdb_setupsummary s
  SET run_count = s.run_count - gone.n, profiled_runs = s.profiled_runs - gone.profiled
  FROM (SELECT o.setup_id, count(*) AS n,
               count(*) FILTER (WHERE EXISTS (
                 SELECT 1 FROM perfdb_profileentry e WHERE e.run_id = o.id)) AS profiled
        FROM removed o GROUP BY o.setup_id ORDER BY o.setup_id) gone
  WHERE s.setup_id = gone.setup_id;
  DELETE FROM perfdb_setupsummary s
  WHERE s.run_count <= 0 AND s.setup_id IN (SELECT setup_id FROM removed);
  UPDATE perfdb_setupsummary s SET (newest_run_id, newest_at) = (
    SELECT r.id, r.created_at FROM perfdb_run r WHERE r.setup_id = s.setup_id
    ORDER BY r.created_at DESC, r.id DESC LIMIT 1)
  WHERE s.newest_run_id IN (SELECT id FROM removed);
  RETURN NULL;
END $$;
"""

RUNS_MOVED = """
CREATE FUNCTION perfdb_summary_runs_moved() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM perfdb_summary_recompute(array(
    SELECT DISTINCT x FROM before b JOIN after a ON a.id = b.id,
      LATERAL unnest(ARRAY[b.setup_id, a.setup_id]) AS x
    WHERE (b.setup_id, b.created_at) IS DISTINCT FROM (a.setup_id, a.created_at)
    ORDER BY x));
  RETURN NULL;
END $$;
"""

# A run becomes profiled when the entries just stored are all it has.
PROFILES_ADDED = """
CREATE FUNCTION perfdb_summary_profiles_added() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE perfdb_setupsummary s SET profiled_runs = s.profiled_runs + p.n
  FROM (SELECT r.setup_id, count(*) AS n
        FROM (SELECT run_id, count(*) AS k FROM added GROUP BY run_id) a
        JOIN perfdb_run r ON r.id = a.run_id
        WHERE (SELECT count(*) FROM perfdb_profileentry e WHERE e.run_id = a.run_id) = a.k
        GROUP BY r.setup_id ORDER BY r.setup_id) p
  WHERE s.setup_id = p.setup_id;
  RETURN NULL;
END $$;
"""

PROFILES_REMOVED = """
CREATE FUNCTION perfdb_summary_profiles_removed() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE perfdb_setupsummary s SET profiled_runs = s.profiled_runs - p.n
  FROM (SELECT r.setup_id, count(*) AS n FROM perfdb_run r
        WHERE r.id IN (SELECT run_id FROM removed)
          AND NOT EXISTS (SELECT 1 FROM perfdb_profileentry e WHERE e.run_id = r.id)
        GROUP BY r.setup_id ORDER BY r.setup_id) p
  WHERE s.setup_id = p.setup_id;
  RETURN NULL;
END $$;
"""

PROFILES_MOVED = """
CREATE FUNCTION perfdb_summary_profiles_moved() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM perfdb_summary_recompute(array(
    SELECT DISTINCT r.setup_id FROM perfdb_run r
    WHERE r.id IN (SELECT b.run_id FROM before b JOIN after a ON a.id = b.id
                   WHERE a.run_id <> b.run_id
                   UNION SELECT a.run_id FROM before b JOIN after a ON a.id = b.id
                   WHERE a.run_id <> b.run_id)
    ORDER BY 1));
  RETURN NULL;
END $$;
"""

# ALWAYS: they fire under session_replication_role = replica too, which the synthetic
# history's bulk load sets to skip the foreign-key checks (ingest/synthetic/store.py).
TRIGGERS = """
CREATE TRIGGER perfdb_summary_runs_added AFTER INSERT ON perfdb_run
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION perfdb_summary_runs_added();
CREATE TRIGGER perfdb_summary_runs_removed AFTER DELETE ON perfdb_run
  REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION perfdb_summary_runs_removed();
CREATE TRIGGER perfdb_summary_runs_moved AFTER UPDATE ON perfdb_run
  REFERENCING OLD TABLE AS before NEW TABLE AS after
  FOR EACH STATEMENT EXECUTE FUNCTION perfdb_summary_runs_moved();
CREATE TRIGGER perfdb_summary_profiles_added AFTER INSERT ON perfdb_profileentry
  REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION perfdb_summary_profiles_added();
CREATE TRIGGER perfdb_summary_profiles_removed AFTER DELETE ON perfdb_profileentry
  REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION perfdb_summary_profiles_removed();
CREATE TRIGGER perfdb_summary_profiles_moved AFTER UPDATE ON perfdb_profileentry
  REFERENCING OLD TABLE AS before NEW TABLE AS after
  FOR EACH STATEMENT EXECUTE FUNCTION perfdb_summary_profiles_moved();
ALTER TABLE perfdb_run ENABLE ALWAYS TRIGGER perfdb_summary_runs_added;
ALTER TABLE perfdb_run ENABLE ALWAYS TRIGGER perfdb_summary_runs_removed;
ALTER TABLE perfdb_run ENABLE ALWAYS TRIGGER perfdb_summary_runs_moved;
ALTER TABLE perfdb_profileentry ENABLE ALWAYS TRIGGER perfdb_summary_profiles_added;
ALTER TABLE perfdb_profileentry ENABLE ALWAYS TRIGGER perfdb_summary_profiles_removed;
ALTER TABLE perfdb_profileentry ENABLE ALWAYS TRIGGER perfdb_summary_profiles_moved;
SELECT perfdb_summary_recompute(array(SELECT DISTINCT setup_id FROM perfdb_run));
"""

DROP = """
DROP TRIGGER perfdb_summary_runs_added ON perfdb_run;
DROP TRIGGER perfdb_summary_runs_removed ON perfdb_run;
DROP TRIGGER perfdb_summary_runs_moved ON perfdb_run;
DROP TRIGGER perfdb_summary_profiles_added ON perfdb_profileentry;
DROP TRIGGER perfdb_summary_profiles_removed ON perfdb_profileentry;
DROP TRIGGER perfdb_summary_profiles_moved ON perfdb_profileentry;
DROP FUNCTION perfdb_summary_runs_added(), perfdb_summary_runs_removed(),
  perfdb_summary_runs_moved(), perfdb_summary_profiles_added(),
  perfdb_summary_profiles_removed(), perfdb_summary_profiles_moved(),
  perfdb_summary_recompute(bigint[]);
"""


class Migration(migrations.Migration):
    dependencies = [
        ("perfdb", "0014_alert_location"),
    ]

    operations = [
        migrations.CreateModel(
            name="SetupSummary",
            fields=[
                (
                    "setup",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.DO_NOTHING,
                        primary_key=True,
                        related_name="summary",
                        serialize=False,
                        to="perfdb.setup",
                    ),
                ),
                ("run_count", models.IntegerField()),
                ("newest_run_id", models.BigIntegerField()),
                ("newest_at", models.DateTimeField()),
                ("profiled_runs", models.IntegerField()),
            ],
        ),
        migrations.RunSQL(
            RECOMPUTE
            + RUNS_ADDED
            + RUNS_REMOVED
            + RUNS_MOVED
            + PROFILES_ADDED
            + PROFILES_REMOVED
            + PROFILES_MOVED
            + TRIGGERS,
            DROP,
        ),
    ]
