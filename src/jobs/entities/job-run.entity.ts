import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * Owned by JobsService: the last run of each scheduled job, whichever instance (or admin) ran it,
 * so operators see when it ran and how it ended, and "has the monthly reset succeeded this month?"
 * survives restarts and is the same on every instance's /metrics.
 */
@Entity({ name: 'job_runs' })
@Check('job_runs_outcome_check', `"outcome" IN ('running', 'succeeded', 'failed', 'skipped')`)
export class JobRun {
  @PrimaryColumn({ type: 'text' })
  job: string;

  /** `schedule`, or the key of an admin who ran it (`key:<id>`). */
  @Column({ type: 'text' })
  trigger: string;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;

  /** `skipped`: another instance held the job's lock. */
  @Column({ type: 'text' })
  outcome: string;

  @Column({ type: 'jsonb', nullable: true })
  result: unknown;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column({ name: 'last_started_at', type: 'timestamptz', nullable: true })
  lastStartedAt: Date | null;

  @Column({ name: 'last_succeeded_at', type: 'timestamptz', nullable: true })
  lastSucceededAt: Date | null;

  @Column({ name: 'last_failed_at', type: 'timestamptz', nullable: true })
  lastFailedAt: Date | null;

  @Column({ name: 'last_duration_ms', type: 'integer', nullable: true })
  lastDurationMs: number | null;

  /** What the last successful run found wrong (a reconcile's discrepancies), when the job reports it. */
  @Column({ name: 'last_problems', type: 'integer', nullable: true })
  lastProblems: number | null;

  @Column({ type: 'bigint', default: 0 })
  failures: string;
}
