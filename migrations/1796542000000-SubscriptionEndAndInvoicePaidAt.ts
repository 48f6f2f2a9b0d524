import { MigrationInterface, QueryRunner } from 'typeorm';

/** When a subscription ended (and the plan terms it ended with) and when an invoice was paid: a cycle paid after its subscription ended grants nothing, in any delivery order. */
export class SubscriptionEndAndInvoicePaidAt1796542000000 implements MigrationInterface {
  name = 'SubscriptionEndAndInvoicePaidAt1796542000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "stripe_subscriptions" ADD "ended_at" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            ALTER TABLE "stripe_subscriptions" ADD "ended_overrides" jsonb
        `);
    await queryRunner.query(`
            ALTER TABLE "stripe_invoices" ADD "paid_at" TIMESTAMP WITH TIME ZONE
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "stripe_invoices" DROP COLUMN "paid_at"
        `);
    await queryRunner.query(`
            ALTER TABLE "stripe_subscriptions" DROP COLUMN "ended_overrides"
        `);
    await queryRunner.query(`
            ALTER TABLE "stripe_subscriptions" DROP COLUMN "ended_at"
        `);
  }
}
