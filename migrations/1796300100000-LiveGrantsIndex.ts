import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every ledger read of a wallet walks the account's grants that still hold credits. Through
 * grants_account_idx that walk visited every grant the account ever had (a monthly allowance each
 * month, every top-up), to keep the few live ones. grants_live_idx holds only active grants: the
 * walk is bounded by what is live. An expired grant keeps nothing (expiry moves its remaining to
 * `expired`, and credits a hold releases to it go there too), which the check now guarantees, so
 * "active" covers every grant with credits left. (Its predicate column, status, changes only on
 * expiry: grant updates stay HOT.)
 */
export class LiveGrantsIndex1796300100000 implements MigrationInterface {
  name = 'LiveGrantsIndex1796300100000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "grants_live_idx" ON "grants" ("account_id") WHERE "status" = 'active'`);
    await queryRunner.query(
      `ALTER TABLE "grants" ADD CONSTRAINT "grants_expired_empty_check" CHECK ("status" = 'active' OR "remaining" = 0)`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "grants" DROP CONSTRAINT "grants_expired_empty_check"`);
    await queryRunner.query(`DROP INDEX "public"."grants_live_idx"`);
  }
}
