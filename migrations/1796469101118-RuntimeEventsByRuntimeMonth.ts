import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `runtime_events` partitioned by the runtime's month (declarative partitioning, by range of
 * `runtime_month`): the month of the runtime's row, `runtime_month(runtimes.created_at)`, which the
 * ingest knows before it writes an event and the session read before it reads one. A runtime's
 * events live in one partition, so the id check and the session read each touch one partition, and
 * a month whose runtimes are settled can be detached and archived whole (docs/scaling.md).
 *
 * The table is rebuilt: a partitioned table cannot be made from an existing one in place. Its rows
 * are copied with their runtime's month (an event whose runtime row is gone, which no code path
 * leaves, takes the month of its own instant). A default partition takes any month that has no
 * partition yet; the `event-partitions` job creates the coming months' partitions ahead.
 * `event_month_archives` lists the months archived since (`cli events archive`).
 */
export class RuntimeEventsByRuntimeMonth1796469101118 implements MigrationInterface {
  name = 'RuntimeEventsByRuntimeMonth1796469101118';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION runtime_month(at timestamptz) RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE
        AS $$ SELECT date_trunc('month', at AT TIME ZONE 'UTC')::date $$
    `);
    await queryRunner.query(`ALTER TABLE "runtime_events" RENAME TO "runtime_events_unpartitioned"`);
    await queryRunner.query(`ALTER TABLE "runtime_events_unpartitioned" DROP CONSTRAINT "runtime_events_seq_check"`);
    await queryRunner.query(`ALTER INDEX "runtime_events_session_idx" RENAME TO "runtime_events_unpartitioned_session_idx"`);
    await queryRunner.query(`
      CREATE TABLE "runtime_events" (
        "id" text NOT NULL,
        "type" text NOT NULL,
        "account_id" text NOT NULL,
        "runtime_id" text NOT NULL,
        "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "seq" bigint NOT NULL,
        "runtime_month" date NOT NULL,
        "data" jsonb NOT NULL DEFAULT '{}',
        "received_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "runtime_events_seq_check" CHECK ("seq" >= 0),
        CONSTRAINT "PK_7bb5c60b16c96fe4d186cdc4c8a" PRIMARY KEY ("id", "runtime_month")
      ) PARTITION BY RANGE ("runtime_month")
    `);
    await queryRunner.query(`
      CREATE INDEX "runtime_events_session_idx" ON "runtime_events" ("runtime_id", "occurred_at", "seq")
      WHERE "type" <> 'runtime.heartbeat'
    `);
    await queryRunner.query(`CREATE TABLE "runtime_events_default" PARTITION OF "runtime_events" DEFAULT`);
    // A month's partition, created when missing: the default partition's rows of that month are moved
    // into it under a lock that holds their inserts back (the identifiers quoted by the server, %I).
    await queryRunner.query(`
      CREATE FUNCTION ensure_runtime_events_partition(at date) RETURNS bigint LANGUAGE plpgsql AS $$
      DECLARE
        m date := date_trunc('month', at)::date;
        n date := (date_trunc('month', at) + interval '1 month')::date;
        name text := 'runtime_events_' || to_char(m, 'YYYY_MM');
        moved bigint;
      BEGIN
        IF to_regclass(name) IS NOT NULL THEN RETURN NULL; END IF;
        LOCK TABLE runtime_events_default IN SHARE ROW EXCLUSIVE MODE;
        EXECUTE format('CREATE TABLE %I (LIKE runtime_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name);
        EXECUTE format('WITH moved AS (DELETE FROM runtime_events_default WHERE runtime_month >= %L AND runtime_month < %L RETURNING *)
          INSERT INTO %I SELECT * FROM moved', m, n, name);
        GET DIAGNOSTICS moved = ROW_COUNT;
        EXECUTE format('ALTER TABLE runtime_events ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', name, m, n);
        RETURN moved;
      END $$
    `);
    // A month's partition detached, for its archive (the identifier quoted by the server).
    await queryRunner.query(`
      CREATE FUNCTION detach_runtime_events_partition(at date) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        EXECUTE format('ALTER TABLE runtime_events DETACH PARTITION %I', 'runtime_events_' || to_char(at, 'YYYY_MM'));
      END $$
    `);
    // A partition for every month that has events, and for this month and the next two.
    await queryRunner.query(`
      SELECT ensure_runtime_events_partition(m) FROM (
        SELECT DISTINCT coalesce(runtime_month(r.created_at), runtime_month(e.occurred_at)) AS m
          FROM "runtime_events_unpartitioned" e LEFT JOIN "runtimes" r USING ("runtime_id")
        UNION SELECT (runtime_month(now()) + make_interval(months => k))::date FROM generate_series(0, 2) k
      ) months ORDER BY m
    `);
    await queryRunner.query(`
      INSERT INTO "runtime_events" ("id", "type", "account_id", "runtime_id", "occurred_at", "seq", "runtime_month", "data", "received_at")
      SELECT e."id", e."type", e."account_id", e."runtime_id", e."occurred_at", e."seq",
        coalesce(runtime_month(r."created_at"), runtime_month(e."occurred_at")), e."data", e."received_at"
      FROM "runtime_events_unpartitioned" e LEFT JOIN "runtimes" r USING ("runtime_id")
    `);
    await queryRunner.query(`DROP TABLE "runtime_events_unpartitioned"`);
    // The months archived (their partition detached): their runtimes' events are refused from then on.
    await queryRunner.query(`
      CREATE TABLE "event_month_archives" (
        "month" date NOT NULL,
        "partition" text NOT NULL,
        "runtimes" integer NOT NULL,
        "archived_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "PK_8622dada2a1c35a1e571f8f22ae" PRIMARY KEY ("month")
      )
    `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    // Back to one table keyed by id: the first row of an id reused across months is kept. (An archived
    // month's detached partition stays as it is, a table of its own.)
    await queryRunner.query(`DROP TABLE "event_month_archives"`);
    await queryRunner.query(`ALTER TABLE "runtime_events" RENAME TO "runtime_events_partitioned"`);
    await queryRunner.query(`ALTER TABLE "runtime_events_partitioned" DROP CONSTRAINT "runtime_events_seq_check"`);
    await queryRunner.query(`ALTER INDEX "runtime_events_session_idx" RENAME TO "runtime_events_partitioned_session_idx"`);
    await queryRunner.query(`ALTER TABLE "runtime_events_partitioned" DROP CONSTRAINT "PK_7bb5c60b16c96fe4d186cdc4c8a"`);
    await queryRunner.query(`
      CREATE TABLE "runtime_events" (
        "id" text NOT NULL,
        "type" text NOT NULL,
        "account_id" text NOT NULL,
        "runtime_id" text NOT NULL,
        "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "seq" bigint NOT NULL,
        "data" jsonb NOT NULL DEFAULT '{}',
        "received_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "runtime_events_seq_check" CHECK ("seq" >= 0),
        CONSTRAINT "PK_a2e07d81842ce4221dd21f349a1" PRIMARY KEY ("id")
      )
    `);
    await queryRunner.query(`
      CREATE INDEX "runtime_events_session_idx" ON "runtime_events" ("runtime_id", "occurred_at", "seq")
      WHERE "type" <> 'runtime.heartbeat'
    `);
    await queryRunner.query(`
      INSERT INTO "runtime_events" ("id", "type", "account_id", "runtime_id", "occurred_at", "seq", "data", "received_at")
      SELECT "id", "type", "account_id", "runtime_id", "occurred_at", "seq", "data", "received_at"
      FROM "runtime_events_partitioned" ORDER BY "runtime_month"
      ON CONFLICT ("id") DO NOTHING
    `);
    await queryRunner.query(`DROP TABLE "runtime_events_partitioned"`);
    await queryRunner.query(`DROP FUNCTION detach_runtime_events_partition(date)`);
    await queryRunner.query(`DROP FUNCTION ensure_runtime_events_partition(date)`);
    await queryRunner.query(`DROP FUNCTION runtime_month(timestamptz)`);
  }
}
