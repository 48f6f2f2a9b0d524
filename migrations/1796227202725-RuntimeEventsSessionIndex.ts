import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sessions are built from a runtime's events other than heartbeats (and only those are read by
 * runtime), so the by-runtime index leaves heartbeats out: they are most of the lifecycle stream, and
 * each now costs one index entry (its id, the inbox key) instead of two. The new index is built
 * before the old one goes, so the by-runtime reads always have one.
 */
export class RuntimeEventsSessionIndex1796227202725 implements MigrationInterface {
  name = 'RuntimeEventsSessionIndex1796227202725';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE INDEX "runtime_events_session_idx" ON "runtime_events" ("runtime_id", "occurred_at", "seq")
      WHERE "type" <> 'runtime.heartbeat'`);
    await queryRunner.query(`DROP INDEX "public"."runtime_events_runtime_idx"`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "runtime_events_runtime_idx" ON "runtime_events" ("runtime_id", "occurred_at", "seq")`);
    await queryRunner.query(`DROP INDEX "public"."runtime_events_session_idx"`);
  }
}
