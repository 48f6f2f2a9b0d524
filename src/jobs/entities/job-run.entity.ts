import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/** The last run of each scheduled job (whoever started it), so operators see when it ran and how it ended. Owned by JobsService. */
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
}
