import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Hand-written (TypeORM does not drop tables it has no entity for): `plan_allowances` duplicated the
 * allowance grant. The grant's id is deterministic per account and period (`alw_<md5(account|period
 * start)>`, allowanceGrantId), so the grant's primary key is the per-period idempotency key, and the
 * row cost the monthly reset a heap row and two index entries per account for nothing.
 */
export class DropPlanAllowances1796214833510 implements MigrationInterface {
  name = 'DropPlanAllowances1796214833510';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "plan_allowances"`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "plan_allowances" (
        "account_id" text NOT NULL,
        "period_start" TIMESTAMP WITH TIME ZONE NOT NULL,
        "period_end" TIMESTAMP WITH TIME ZONE NOT NULL,
        "grant_id" text NOT NULL,
        "amount" bigint NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "plan_allowances_period_check" CHECK ("period_end" > "period_start"),
        CONSTRAINT "plan_allowances_amount_check" CHECK ("amount" > 0),
        CONSTRAINT "PK_24431742f4d84783e9950d0c91e" PRIMARY KEY ("account_id", "period_start")
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX "plan_allowances_grant_key" ON "plan_allowances" ("grant_id")`);
    // Back-filled from the allowance grants: the period ends when the grant expires and starts a month earlier.
    await queryRunner.query(`
      INSERT INTO plan_allowances (account_id, period_start, period_end, grant_id, amount, created_at)
      SELECT account_id, expires_at - interval '1 month', expires_at, id, amount, created_at
      FROM grants WHERE source = 'plan_allowance' AND id LIKE 'alw\\_%' AND expires_at IS NOT NULL
      ON CONFLICT DO NOTHING`);
  }
}
