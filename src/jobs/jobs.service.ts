import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { tryAdvisoryLock } from '../common/database/advisory-lock';
import { withCorrelation } from '../common/context/correlation';
import { BillingException } from '../common/errors/billing.exception';
import { Metrics } from '../health/metrics';

export const JOB_NAMES = ['monthly-reset', 'expiry-sweep', 'grant-expiry', 'seat-reconciliation', 'stripe-recovery', 'ledger-reconcile'] as const;
export type JobName = (typeof JOB_NAMES)[number];

export type JobResult = { job: string; ran: true; result: unknown } | { job: string; ran: false; reason: string };

/**
 * Scheduled jobs by name. Each run holds a Postgres advisory lock named after the job, so one
 * instance runs it at a time, whether started by its schedule or by POST /v1/admin/jobs/{job}/run.
 * Owns the job_runs table: every run's start, success or failure and duration, for /metrics.
 */
@Injectable()
export class JobsService {
  private readonly logger = new Logger('Jobs');
  private readonly jobs = new Map<string, () => Promise<unknown>>();
  /** How often each scheduled job is meant to run (seconds), published so one alert rule fits all jobs. */
  readonly intervals = new Map<string, number>();

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly metrics: Metrics,
  ) {}

  register(name: JobName, work: () => Promise<unknown>): void {
    this.jobs.set(name, work);
  }

  /** Says how often a scheduled job runs (dl_billing_job_interval_seconds), for the alert on late jobs. */
  scheduledEvery(name: JobName, ms: number): void {
    this.intervals.set(name, ms / 1000);
  }

  async run(name: string): Promise<JobResult> {
    const work = this.jobs.get(name);
    if (!work) {
      const known = [...this.jobs.keys()].join(', ');
      throw BillingException.notFound(`Job ${name} (jobs available: ${known})`);
    }
    const outcome = await withCorrelation({ id: `job:${name}:${Date.now()}`, kind: 'job' }, () =>
      tryAdvisoryLock(this.ds, `job:${name}`, () => this.recorded(name, work)),
    );
    if (!outcome.ran) {
      this.metrics.jobRuns.inc({ job: name, result: 'skipped' });
      return { job: name, ran: false, reason: 'another instance is running it' };
    }
    return { job: name, ran: true, result: outcome.result };
  }

  /** For schedules: runs the job and logs (never throws) so a failure waits for the next tick. */
  async tick(name: JobName): Promise<void> {
    try {
      await this.run(name);
    } catch (error) {
      this.logger.error(`job ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async recorded(name: string, work: () => Promise<unknown>): Promise<unknown> {
    const started = Date.now();
    await this.record(`INSERT INTO job_runs (job, last_started_at) VALUES ($1, now())
      ON CONFLICT (job) DO UPDATE SET last_started_at = now()`, [name]);
    const end = this.metrics.jobDuration.startTimer({ job: name });
    try {
      const result = await work();
      end();
      this.metrics.jobRuns.inc({ job: name, result: 'succeeded' });
      await this.record(`UPDATE job_runs SET last_succeeded_at = now(), last_duration_ms = $2, last_problems = $3 WHERE job = $1`, [
        name,
        Date.now() - started,
        problemsOf(result),
      ]);
      return result;
    } catch (error) {
      end();
      this.metrics.jobRuns.inc({ job: name, result: 'failed' });
      await this.record(`UPDATE job_runs SET last_failed_at = now(), last_duration_ms = $2, failures = failures + 1 WHERE job = $1`, [
        name,
        Date.now() - started,
      ]);
      throw error;
    }
  }

  /** The bookkeeping of a run never decides its outcome: a failure to write it is logged. */
  private async record(sql: string, params: unknown[]): Promise<void> {
    await this.ds.query(sql, params).catch((error: unknown) => {
      this.logger.warn(`could not record the job run: ${error instanceof Error ? error.message : String(error)}`);
    });
  }
}

/** A job that checks something reports what it found as `{ problems: n }`. */
function problemsOf(result: unknown): number | null {
  const problems = (result as { problems?: unknown } | null)?.problems;
  return typeof problems === 'number' ? problems : null;
}
