import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Heartbeats are no longer stored in runtime_events: each runtime keeps the highest heartbeat seq it
 * has applied and how many it counted. Existing heartbeat rows stay; the counters start from them.
 */
export class HeartbeatsBySeq1796400000000 implements MigrationInterface {
  name = 'HeartbeatsBySeq1796400000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "runtimes" ADD "heartbeat_seq" bigint
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" ADD "heartbeats" integer NOT NULL DEFAULT '0'
        `);
    await queryRunner.query(`
            UPDATE "runtimes" r SET "heartbeat_seq" = h.top, "heartbeats" = h.n
            FROM (SELECT "runtime_id", max("seq") AS top, count(*)::int AS n FROM "runtime_events" WHERE "type" = 'runtime.heartbeat' GROUP BY "runtime_id") h
            WHERE r."runtime_id" = h."runtime_id"
        `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "heartbeats"
        `);
    await queryRunner.query(`
            ALTER TABLE "runtimes" DROP COLUMN "heartbeat_seq"
        `);
  }
}
