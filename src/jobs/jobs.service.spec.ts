import { describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import type { AuditService } from 'src/audit/audit.service';
import { Metrics } from 'src/health/metrics';
import { ManualClock } from 'src/infra/clock/clock';
import { JobsService } from './jobs.service';

describe('JobsService', () => {
  it('publishes how often each scheduled job runs, for the alert on late jobs', async () => {
    const metrics = new Metrics();
    const jobs = new JobsService({} as DataSource, {} as AuditService, new ManualClock(new Date()), metrics);
    jobs.scheduledEvery('ledger-reconcile', 6 * 3_600_000);
    jobs.scheduledEvery('expiry-sweep', 5_000);
    const text = await metrics.registry.metrics();
    expect(text).toContain('dl_billing_job_interval_seconds{job_name="ledger-reconcile"} 21600');
    expect(text).toContain('dl_billing_job_interval_seconds{job_name="expiry-sweep"} 5');
  });
});
