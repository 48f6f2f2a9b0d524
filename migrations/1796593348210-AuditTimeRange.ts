import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `GET /v1/audit?from=&to=` walked the log backwards by id, reading every row newer than the range: a
 * range is read from an index by time instead (its rows whatever their ids: a row's `at` is the date
 * of what it records, days out of id order at times). Written with every audit row (every hold).
 */
export class AuditTimeRange1796593348210 implements MigrationInterface {
  name = 'AuditTimeRange1796593348210';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE INDEX "audit_log_at_idx" ON "audit_log" ("at", "id")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."audit_log_at_idx"
        `);
  }
}
