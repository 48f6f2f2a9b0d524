import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { z } from 'zod';
import { AuditService } from 'src/audit/audit.service';
import { withCorrelation } from 'src/common/context/correlation';
import { tryAdvisoryLock } from 'src/common/database/advisory-lock';
import { withQueryBound } from 'src/common/database/query-bounds';
import { inTransaction, rows } from 'src/common/database/transaction';
import { BillingException } from 'src/common/errors/billing.exception';
import { Clock } from 'src/infra/clock/clock';
import { Metrics } from 'src/health/metrics';

export const JOB_NAMES = [
  'monthly-reset',
  'cycle-allowances',
  'expiry-sweep',
  'grant-expiry',
  'seat-reconciliation',
  'stripe-recovery',
  'ledger-reconcile',
  'ancillary-accrual',
  'event-partitions',
] as const;
export type JobName = (typeof JOB_NAMES)[number];

export const jobResultSchema = z
  .union([
    z.strictObject({
      job: z.string(),
      runId: z.string().meta({ description: 'The run id: the correlation id of every audit row the run writes' }),
      ran: z.literal(true),
      result: z.unknown().meta({ description: "The job's own summary (JSON)" }),
    }),
    z.strictObject({ job: z.string(), runId: z.string(), ran: z.literal(false), reason: z.string() }),
  ])
  .meta({ id: 'JobResult' });
export type JobResult = z.infer<typeof jobResultSchema>;

/** The last run of a job, as `job_runs` keeps it. */
export interface JobRunView {
  job: string;
  trigger: string;
  startedAt: string;
  finishedAt: string | null;
  outcome: 'running' | 'succeeded' | 'failed' | 'skipped';
  result: unknown;
  error: string | null;
}

/**
 * Scheduled jobs by name. Each run holds a Postgres advisory lock named after the job, so one
 * instance runs it at a time, whether started by its schedule or by POST /v1/admin/jobs/{job}/run.
 * Owns the job_runs table: each job's last run and how it ended (shown in the admin console), and
 * every run's start, success or failure and duration (for /metrics).
 */
@Injectable()
export class JobsService {
  private readonly logger = new Logger('Jobs');
  private readonly jobs = new Map<string, () => Promise<unknown>>();
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {}

  register(name: JobName, work: () => Promise<unknown>): void {
    this.jobs.set(name, work);
  }

  /** Says how often a scheduled job runs (dl_billing_job_interval_seconds), for the alert on late jobs. */
  scheduledEvery(name: JobName, ms: number): void {
    this.metrics.jobInterval.set({ job_name: name }, ms / 1000);
  }

  /** The jobs this instance can run, by name. */
  names(): string[] {
    return [...this.jobs.keys()].sort();
  }

  /**
   * Runs a job now. `actor`: the key of an admin who asked (audited as `job.run`, with the
   * outcome); absent for schedules.
   */
  async run(name: string, actor?: string, correlationId: string | null = null): Promise<JobResult> {
    const work = this.jobs.get(name);
    if (!work) {
      const known = [...this.jobs.keys()].join(', ');
      throw BillingException.notFound(`Job ${name} (jobs available: ${known})`);
    }
    // Every audit row of the run carries its run id (even when an admin's request started it).
    const runId = `job_${randomUUID()}`;
    const trigger = actor ?? 'schedule';
    const startedAt = new Date();
    let outcome: Awaited<ReturnType<typeof tryAdvisoryLock<unknown>>>;
    try {
      outcome = await withCorrelation({ id: runId, kind: 'job' }, () =>
        tryAdvisoryLock(this.ds, `job:${name}`, async () => {
          await this.record(name, trigger, startedAt, null, 'running', null, null);
          // A job's statements run over many rows (the monthly reset's batches, the partitions'
          // archiving): each has DATABASE_LONG_QUERY_TIMEOUT_MS, not a request's bound.
          return withQueryBound('long', () => this.recorded(name, work));
        }),
      );
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      await this.record(name, trigger, startedAt, new Date(), 'failed', null, message, actor, correlationId);
      throw error;
    }
    if (!outcome.ran) {
      this.metrics.jobRuns.inc({ job_name: name, result: 'skipped' });
      if (actor) await this.record(name, trigger, startedAt, new Date(), 'skipped', null, null, actor, correlationId, false);
      return { job: name, runId, ran: false, reason: 'another instance is running it' };
    }
    await this.record(name, trigger, startedAt, new Date(), 'succeeded', outcome.result, null, actor, correlationId);
    return { job: name, runId, ran: true, result: outcome.result };
  }

  /** The last run of every job that ran at least once, by name. */
  async lastRuns(): Promise<JobRunView[]> {
    const found = await rows<{
      job: string;
      trigger: string;
      started_at: Date;
      finished_at: Date | null;
      outcome: JobRunView['outcome'];
      result: unknown;
      error: string | null;
    }>(this.ds, `SELECT job, trigger, started_at, finished_at, outcome, result, error FROM job_runs ORDER BY job`);
    return found.map((r) => ({
      job: r.job,
      trigger: r.trigger,
      startedAt: r.started_at.toISOString(),
      finishedAt: r.finished_at?.toISOString() ?? null,
      outcome: r.outcome,
      result: r.result,
      error: r.error,
    }));
  }

  /** For schedules: runs the job and logs (never throws) so a failure waits for the next tick. */
  async tick(name: JobName): Promise<void> {
    try {
      await this.run(name);
    } catch (error) {
      this.logger.error(`job ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /**
   * Keeps the job's last run (a skipped run does not replace a real one: `replace` false) and, for
   * a run an admin asked for, its audit row once it has ended.
   */
  private async record(
    job: string,
    trigger: string,
    startedAt: Date,
    finishedAt: Date | null,
    outcome: JobRunView['outcome'],
    result: unknown,
    error: string | null,
    actor?: string,
    correlationId: string | null = null,
    replace = true,
  ): Promise<void> {
    try {
      await inTransaction(this.ds, async (em) => {
        await em.query(
          `INSERT INTO job_runs (job, trigger, started_at, finished_at, outcome, result, error) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)
           ON CONFLICT (job) DO ${
             replace
               ? `UPDATE SET trigger = EXCLUDED.trigger, started_at = EXCLUDED.started_at, finished_at = EXCLUDED.finished_at,
             outcome = EXCLUDED.outcome, result = EXCLUDED.result, error = EXCLUDED.error`
               : 'NOTHING'
           }`,
          [job, trigger, startedAt, finishedAt, outcome, result === undefined || result === null ? null : JSON.stringify(result), error],
        );
        if (actor && outcome !== 'running') {
          await this.audit.record(em, { actor, action: 'job.run', after: { job, outcome, error }, correlationId, at: this.clock.now() });
        }
      });
    } catch (e) {
      // Keeping the record must never fail the job itself.
      this.logger.warn(`could not record the run of ${job}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private async recorded(name: string, work: () => Promise<unknown>): Promise<unknown> {
    const started = Date.now();
    // The run's row exists: record() wrote it ('running') before the work started.
    await this.bookkeep(`UPDATE job_runs SET last_started_at = now() WHERE job = $1`, [name]);
    const end = this.metrics.jobDuration.startTimer({ job_name: name });
    try {
      const result = await work();
      end();
      this.metrics.jobRuns.inc({ job_name: name, result: 'succeeded' });
      await this.bookkeep(`UPDATE job_runs SET last_succeeded_at = now(), last_duration_ms = $2, last_problems = $3 WHERE job = $1`, [
        name,
        Date.now() - started,
        problemsOf(result),
      ]);
      return result;
    } catch (error) {
      end();
      this.metrics.jobRuns.inc({ job_name: name, result: 'failed' });
      await this.bookkeep(`UPDATE job_runs SET last_failed_at = now(), last_duration_ms = $2, failures = failures + 1 WHERE job = $1`, [
        name,
        Date.now() - started,
      ]);
      throw error;
    }
  }

  /** The bookkeeping of a run never decides its outcome: a failure to write it is logged. */
  private async bookkeep(sql: string, params: unknown[]): Promise<void> {
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
