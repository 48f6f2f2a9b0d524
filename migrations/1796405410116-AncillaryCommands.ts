import { MigrationInterface, QueryRunner } from 'typeorm';

export class AncillaryCommands1796405410116 implements MigrationInterface {
  name = 'AncillaryCommands1796405410116';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "ancillary_commands" (
                "id" text NOT NULL,
                "account_id" text NOT NULL,
                "snapshot_id" text NOT NULL,
                "reason" text NOT NULL,
                "unpaid_since" TIMESTAMP WITH TIME ZONE NOT NULL,
                "issued_at" TIMESTAMP WITH TIME ZONE NOT NULL,
                CONSTRAINT "PK_f9d834be85e1048c5e524e3ec6d" PRIMARY KEY ("id")
            )
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            DROP TABLE "ancillary_commands"
        `);
  }
}
