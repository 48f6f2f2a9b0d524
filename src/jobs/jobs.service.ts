import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { withCorrelation } from '../common/context/correlation';
import { tryAdvisoryLock } from '../common/database/advisory-lock';
import { BillingException } from '../common/errors/billing.exception';

export const JOB_NAMES = ['monthly-reset', 'expiry-sweep', 'grant-expiry', 'seat-reconciliation', 'stripe-recovery'] as const;
export type JobName = (typeof JOB_NAMES)[number];

/** `runId`: the run's id, the correlation id of every audit row it writes. */
export type JobResult = { job: string; runId: string; ran: true; result: unknown } | { job: string; runId: string; ran: false; reason: string };

/**
 * Scheduled jobs by name. Each run holds a Postgres advisory lock named after the job, so one
 * instance runs it at a time, whether started by its schedule or by POST /v1/admin/jobs/{job}/run.
 */
@Injectable()
export class JobsService {
  private readonly logger = new Logger('Jobs');
  private readonly jobs = new Map<string, () => Promise<unknown>>();

  constructor(@InjectDataSource() private readonly ds: DataSource) {}

  register(name: JobName, work: () => Promise<unknown>): void {
    this.jobs.set(name, work);
  }

  async run(name: string): Promise<JobResult> {
    const work = this.jobs.get(name);
    if (!work) {
      const known = [...this.jobs.keys()].join(', ');
      throw BillingException.notFound(`Job ${name} (jobs available: ${known})`);
    }
    // Every audit row of the run carries its run id (even when an admin's request started it).
    const runId = `job_${randomUUID()}`;
    const outcome = await withCorrelation({ id: runId, kind: 'job' }, () => tryAdvisoryLock(this.ds, `job:${name}`, work));
    if (!outcome.ran) return { job: name, runId, ran: false, reason: 'another instance is running it' };
    return { job: name, runId, ran: true, result: outcome.result };
  }

  /** For schedules: runs the job and logs (never throws) so a failure waits for the next tick. */
  async tick(name: JobName): Promise<void> {
    try {
      await this.run(name);
    } catch (error) {
      this.logger.error(`job ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
