import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Why an account is suspended (an admin, non-payment, or both) is the account's: each cause is lifted
 * on its own, so a paid invoice no longer lifts an admin's suspension placed after the one for
 * non-payment. It replaces the subscription's `suspended_for_payment` flag.
 */
export class SuspensionCauses1796543000000 implements MigrationInterface {
  name = 'SuspensionCauses1796543000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "accounts" ADD "suspended_for" text array NOT NULL DEFAULT '{}'
        `);
    // A suspension the subscription placed is non-payment's; any other was an admin's.
    await queryRunner.query(`
            UPDATE "accounts" a SET "suspended_for" = CASE WHEN EXISTS (
                SELECT 1 FROM "stripe_subscriptions" s WHERE s."account_id" = a."id" AND s."suspended_for_payment")
              THEN '{non_payment}'::text[] ELSE '{admin}'::text[] END
            WHERE a."status" = 'suspended'
        `);
    await queryRunner.query(`
            ALTER TABLE "stripe_subscriptions" DROP COLUMN "suspended_for_payment"
        `);
    await queryRunner.query(`
            ALTER TABLE "accounts" ADD CONSTRAINT "accounts_suspended_for_check" CHECK ("suspended_for" <@ ARRAY['admin', 'non_payment']::text[])
        `);
    await queryRunner.query(`
            ALTER TABLE "accounts" ADD CONSTRAINT "accounts_suspended_for_status_check" CHECK (("status" = 'suspended') = (cardinality("suspended_for") > 0))
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "accounts" DROP CONSTRAINT "accounts_suspended_for_status_check"
        `);
    await queryRunner.query(`
            ALTER TABLE "accounts" DROP CONSTRAINT "accounts_suspended_for_check"
        `);
    await queryRunner.query(`
            ALTER TABLE "stripe_subscriptions" ADD "suspended_for_payment" boolean NOT NULL DEFAULT false
        `);
    await queryRunner.query(`
            UPDATE "stripe_subscriptions" s SET "suspended_for_payment" = true FROM "accounts" a
            WHERE a."id" = s."account_id" AND 'non_payment' = ANY(a."suspended_for")
        `);
    await queryRunner.query(`
            ALTER TABLE "accounts" DROP COLUMN "suspended_for"
        `);
  }
}
