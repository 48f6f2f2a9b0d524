import { MigrationInterface, QueryRunner } from 'typeorm';

/** The accounts a contract puts on a billing cycle, read every minute by the cycle-allowances job. */
export class AccountsBillingCycleIndex1796504505832 implements MigrationInterface {
  name = 'AccountsBillingCycleIndex1796504505832';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE INDEX "accounts_billing_cycle_idx" ON "accounts" ("id")
            WHERE ("plan_overrides"->>'period') = 'billing_cycle'
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP INDEX "public"."accounts_billing_cycle_idx"
        `);
  }
}
