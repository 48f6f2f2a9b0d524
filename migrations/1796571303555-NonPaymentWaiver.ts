import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When an admin last waived an account's suspension for non-payment: the subscription's past-due
 * spell that began before it does not suspend the account again (stripe/non-payment.ts).
 */
export class NonPaymentWaiver1796571303555 implements MigrationInterface {
  name = 'NonPaymentWaiver1796571303555';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "accounts"
            ADD "non_payment_waived_at" TIMESTAMP WITH TIME ZONE
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "accounts" DROP COLUMN "non_payment_waived_at"
        `);
  }
}
