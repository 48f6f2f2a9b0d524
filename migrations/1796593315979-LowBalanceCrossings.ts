import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `wallet.low_balance` once per crossing of the threshold: the wallet keeps the line its last notice
 * announced and how many times the available balance came back to it (the cause's `<n>`). Existing
 * wallets start with no line and 0 (a constant default: no table rewrite).
 */
export class LowBalanceCrossings1796593315979 implements MigrationInterface {
  name = 'LowBalanceCrossings1796593315979';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "wallets"
            ADD "low_balance_line" bigint
        `);
    await queryRunner.query(`
            ALTER TABLE "wallets"
            ADD "low_balance_rises" bigint NOT NULL DEFAULT '0'
        `);
    await queryRunner.query(`
            ALTER TABLE "wallets"
            ADD CONSTRAINT "wallets_low_balance_rises_check" CHECK ("low_balance_rises" >= 0)
        `);
    await queryRunner.query(`
            ALTER TABLE "wallets"
            ADD CONSTRAINT "wallets_low_balance_line_check" CHECK ("low_balance_line" > 0)
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "wallets" DROP CONSTRAINT "wallets_low_balance_line_check"
        `);
    await queryRunner.query(`
            ALTER TABLE "wallets" DROP CONSTRAINT "wallets_low_balance_rises_check"
        `);
    await queryRunner.query(`
            ALTER TABLE "wallets" DROP COLUMN "low_balance_rises"
        `);
    await queryRunner.query(`
            ALTER TABLE "wallets" DROP COLUMN "low_balance_line"
        `);
  }
}
