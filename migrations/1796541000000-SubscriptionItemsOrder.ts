import { MigrationInterface, QueryRunner } from 'typeorm';

/** A subscription's items are ordered by the subscription events apart from its state (which invoice events move too). */
export class SubscriptionItemsOrder1796541000000 implements MigrationInterface {
  name = 'SubscriptionItemsOrder1796541000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "stripe_subscriptions" ADD "items_event_created" bigint NOT NULL DEFAULT '0'
        `);
    await queryRunner.query(`
            UPDATE "stripe_subscriptions" SET "items_event_created" = "state_event_created"
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "stripe_subscriptions" DROP COLUMN "items_event_created"
        `);
  }
}
