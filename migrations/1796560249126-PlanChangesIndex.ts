import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An account's plan changes, found without reading its audit chain (a row for every change of its
 * money): a cycle's credits are granted on the terms the account had when its invoice was paid, read
 * from the changes made since (plans/plan-history.ts).
 */
export class PlanChangesIndex1796560249126 implements MigrationInterface {
  name = 'PlanChangesIndex1796560249126';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE INDEX "audit_log_plan_changes_idx" ON "audit_log" ("chain", "at")
            WHERE "action" IN ('plan.changed', 'account.updated')
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."audit_log_plan_changes_idx"
        `);
  }
}
