import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An invoice keeps when Stripe created it, so that a membership change dated before that and received
 * after can recheck the seats active then (rows recorded before stay null and are not rechecked); an
 * invoice's seat flag that such a change shows wrong is marked resolved, with when and by which change.
 */
export class InvoiceSeatsRecheck1796544000000 implements MigrationInterface {
  name = 'InvoiceSeatsRecheck1796544000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "stripe_invoices" ADD "created" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            ALTER TABLE "stripe_seat_discrepancies" ADD "resolved_at" TIMESTAMP WITH TIME ZONE
        `);
    await queryRunner.query(`
            ALTER TABLE "stripe_seat_discrepancies" ADD "resolved_by" text
        `);
    await queryRunner.query(`
            ALTER TABLE "stripe_seat_discrepancies" ADD CONSTRAINT "stripe_seat_discrepancies_resolved_check" CHECK (("resolved_at" IS NULL) = ("resolved_by" IS NULL) AND ("resolved_at" IS NULL OR "kind" = 'invoice_seats'))
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "stripe_seat_discrepancies" DROP CONSTRAINT "stripe_seat_discrepancies_resolved_check"
        `);
    await queryRunner.query(`
            ALTER TABLE "stripe_seat_discrepancies" DROP COLUMN "resolved_by"
        `);
    await queryRunner.query(`
            ALTER TABLE "stripe_seat_discrepancies" DROP COLUMN "resolved_at"
        `);
    await queryRunner.query(`
            ALTER TABLE "stripe_invoices" DROP COLUMN "created"
        `);
  }
}
