import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `GET /v1/audit?from=&to=` walked the log backwards by id, reading every row newer than the range: a
 * range is read from an index by time instead (its rows whatever their ids: a row's `at` is the date
 * of what it records, days out of id order at times). Written with every audit row (every hold).
 *
 * Built CONCURRENTLY, outside a transaction (`transaction = false`): a plain CREATE INDEX holds a
 * ShareLock on `audit_log` for the whole build, and every hold, which writes an audit row, would wait
 * for it at deploy (docs/operations.md, "Migrations on a hot table"). A concurrent build that failed
 * leaves an invalid index of that name, dropped here before building again; a valid one (built by a
 * run that stopped before recording the migration) is kept.
 */
export class AuditTimeRange1796593348210 implements MigrationInterface {
  name = 'AuditTimeRange1796593348210';
  transaction = false;

  public async up(queryRunner: QueryRunner): Promise<void> {
    const [leftover] = (await queryRunner.query(
      `SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass('"public"."audit_log_at_idx"')`,
    )) as { indisvalid: boolean }[];
    if (leftover && !leftover.indisvalid) {
      await queryRunner.query(`DROP INDEX CONCURRENTLY "public"."audit_log_at_idx"`);
    }
    await queryRunner.query(`
            CREATE INDEX CONCURRENTLY IF NOT EXISTS "audit_log_at_idx" ON "audit_log" ("at", "id")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    // `npm run migration:revert` runs it outside a transaction (mode `each`, `transaction = false`); the
    // TypeORM CLI's `migration:revert -t all` would run it inside one.
    const concurrently = queryRunner.isTransactionActive ? '' : 'CONCURRENTLY ';
    await queryRunner.query(`
            DROP INDEX ${concurrently}IF EXISTS "public"."audit_log_at_idx"
        `);
  }
}
