import { MigrationInterface, QueryRunner } from 'typeorm';

export class StripeInvoiceAmounts1796414845223 implements MigrationInterface {
  name = 'StripeInvoiceAmounts1796414845223';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "stripe_invoices"
            ADD "lines" jsonb
        `);
    await queryRunner.query(`
            ALTER TABLE "stripe_invoices"
            ADD "total_cents" bigint
        `);
    await queryRunner.query(`
            ALTER TABLE "stripe_invoices"
            ADD "currency" text
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "stripe_invoices" DROP COLUMN "currency"
        `);
    await queryRunner.query(`
            ALTER TABLE "stripe_invoices" DROP COLUMN "total_cents"
        `);
    await queryRunner.query(`
            ALTER TABLE "stripe_invoices" DROP COLUMN "lines"
        `);
  }
}
