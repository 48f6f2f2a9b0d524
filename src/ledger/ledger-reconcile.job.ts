import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { JobsService } from 'src/jobs/jobs.service';
import { LedgerService } from './ledger.service';

/** Every 6 hours: the whole ledger checked against its stored balances (one scan; far from the hot path). */
const EVERY_MS = 6 * 3_600_000;

/**
 * The `ledger-reconcile` job: `LedgerService.reconcile` on every account. Its discrepancies are the
 * run's `problems` (job_runs.last_problems, dl_billing_job_last_problems), which the
 * DlBillingLedgerDiscrepancy alert watches; they are logged one a line for the on-call engineer.
 */
@Injectable()
export class LedgerReconcileJob implements OnApplicationBootstrap {
  private readonly logger = new Logger('LedgerReconcile');

  constructor(
    private readonly jobs: JobsService,
    private readonly ledger: LedgerService,
    private readonly schedules: SchedulerRegistry,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.jobs.register('ledger-reconcile', () => this.run());
    if (!this.config.cronEnabled) return;
    this.schedules.addInterval(
      'ledger-reconcile',
      setInterval(() => void this.jobs.tick('ledger-reconcile'), EVERY_MS),
    );
    this.jobs.scheduledEvery('ledger-reconcile', EVERY_MS);
  }

  async run(): Promise<{ problems: number; discrepancies: unknown[] }> {
    const discrepancies = await this.ledger.reconcile();
    for (const d of discrepancies) this.logger.error({ msg: 'ledger discrepancy', ...d });
    return { problems: discrepancies.length, discrepancies: discrepancies.slice(0, 100) };
  }
}
