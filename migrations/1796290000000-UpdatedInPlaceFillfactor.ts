import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The rows the ledger updates on every write (a wallet's balances and version, a grant's remaining,
 * a hold and its allocations, an audit chain's head, a runtime's state) leave room in their pages,
 * so that PostgreSQL can write the new version of a row beside the old one without touching the
 * indexes (a HOT update) when no indexed column changes. With full pages (the default fillfactor,
 * 100) almost no update was HOT: every wallet update also inserted a primary-key entry and every
 * grant update three index entries, each with its WAL record. Applies to pages written from now on.
 */
export class UpdatedInPlaceFillfactor1796290000000 implements MigrationInterface {
  name = 'UpdatedInPlaceFillfactor1796290000000';

  static readonly TABLES = ['wallets', 'grants', 'holds', 'hold_allocations', 'audit_chains', 'runtimes'];

  public async up(queryRunner: QueryRunner): Promise<void> {
    for (const table of UpdatedInPlaceFillfactor1796290000000.TABLES) {
      await queryRunner.query(`ALTER TABLE "${table}" SET (fillfactor = 70)`);
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of UpdatedInPlaceFillfactor1796290000000.TABLES) {
      await queryRunner.query(`ALTER TABLE "${table}" RESET (fillfactor)`);
    }
  }
}
