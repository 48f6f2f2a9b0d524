import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The period reports (credits, spend-limits, reconciliation) read their period's rows, not whole
 * tables: ledger transactions by time without reservations (a reservation never moves `issued`,
 * `consumption` or `expired`), terminate commands by when they were issued, spend-limit alerts by
 * when they were notified, seat discrepancies by when they were detected.
 */
export class ReportPeriodReads1796571117268 implements MigrationInterface {
  name = 'ReportPeriodReads1796571117268';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE INDEX "ledger_transactions_time_idx" ON "ledger_transactions" ("created_at")
            WHERE "kind" <> 'reservation'
        `);
    await queryRunner.query(`
            CREATE INDEX "runtime_commands_issued_idx" ON "runtime_commands" ("issued_at")
        `);
    await queryRunner.query(`
            CREATE INDEX "spend_limit_alerts_notified_idx" ON "spend_limit_alerts" ("notified_at")
        `);
    await queryRunner.query(`
            CREATE INDEX "stripe_seat_discrepancies_detected_idx" ON "stripe_seat_discrepancies" ("detected_at")
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."stripe_seat_discrepancies_detected_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."spend_limit_alerts_notified_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."runtime_commands_issued_idx"
        `);
    await queryRunner.query(`
            DROP INDEX "public"."ledger_transactions_time_idx"
        `);
  }
}
