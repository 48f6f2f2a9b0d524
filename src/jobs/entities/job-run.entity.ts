import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * Owned by JobsService: the last run of each scheduled job, whichever instance ran it, so that
 * "has the monthly reset succeeded this month?" survives restarts and is the same on every
 * instance's /metrics.
 */
@Entity({ name: 'job_runs' })
export class JobRun {
  @PrimaryColumn({ type: 'text' })
  job: string;

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
