import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { rows } from 'src/common/database/transaction';
import { Clock } from 'src/infra/clock/clock';
import { JobsService } from 'src/jobs/jobs.service';
import { SeatsService } from './seats.service';
import { NonPayment } from './non-payment';
import { STRIPE_INBOX, StripeEventsService } from './stripe-events.service';
import { StripeGateway } from './stripe-gateway';

/** How far back the recovery job looks for events (Stripe keeps 30 days of them). */
const RECOVERY_WINDOW_MS = 3 * 24 * 3_600_000;

export interface RecoveryResult {
  listed: number;
  applied: number;
  failed: { eventId: string; error: string }[];
  suspended: string[];
  /** Events acknowledged but waiting for another (a refund before its top-up's checkout): not applied, not failed. */
  waiting: number;
  /** How many events could not be applied (`dl_billing_job_last_problems`). */
  problems: number;
}

/**
 * The Stripe jobs: `seat-reconciliation` and `stripe-recovery` (events missed by the webhook,
 * listed from Stripe and applied when not in the inbox; then past-due accounts beyond the grace
 * period are suspended). Both run under their job's advisory lock, on an interval when cron is on.
 */
@Injectable()
export class StripeJobs implements OnApplicationBootstrap {
  private readonly logger = new Logger('StripeJobs');

  constructor(
    private readonly jobs: JobsService,
    private readonly seats: SeatsService,
    private readonly events: StripeEventsService,
    private readonly nonPayment: NonPayment,
    private readonly gateway: StripeGateway,
    private readonly schedules: SchedulerRegistry,
    private readonly clock: Clock,
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.jobs.register('seat-reconciliation', () => this.seats.reconcile());
    this.jobs.register('stripe-recovery', () => this.recover());
    if (!this.config.cronEnabled || !this.gateway.enabled) return;
    const every = this.config.stripe.jobsIntervalMs;
    this.schedules.addInterval(
      'seat-reconciliation',
      setInterval(() => void this.jobs.tick('seat-reconciliation'), every),
    );
    this.schedules.addInterval(
      'stripe-recovery',
      setInterval(() => void this.jobs.tick('stripe-recovery'), every),
    );
    this.jobs.scheduledEvery('seat-reconciliation', every);
    this.jobs.scheduledEvery('stripe-recovery', every);
    this.logger.log(`seat reconciliation and Stripe recovery every ${every} ms`);
  }

  async recover(): Promise<RecoveryResult> {
    const result: RecoveryResult = { listed: 0, applied: 0, failed: [], suspended: [], waiting: 0, problems: 0 };
    if (this.gateway.enabled) {
      const listed = await this.gateway.eventsSince(new Date(this.clock.now().getTime() - RECOVERY_WINDOW_MS));
      result.listed = listed.length;
      const seen = new Set(
        (
          await rows<{ message_id: string }>(this.ds, `SELECT message_id FROM inbox WHERE source = $1 AND message_id = ANY($2)`, [
            STRIPE_INBOX,
            listed.map((e) => e.id),
          ])
        ).map((r) => r.message_id),
      );
      for (const event of listed.filter((e) => !seen.has(e.id))) {
        try {
          const outcome = await this.events.handle(event);
          if (outcome.waiting) result.waiting += 1;
          else if (!outcome.duplicate) result.applied += 1;
        } catch (error) {
          result.failed.push({ eventId: event.id, error: error instanceof Error ? error.message : String(error) });
        }
      }
    }
    result.suspended = await this.nonPayment.suspendOverdue();
    result.problems = result.failed.length;
    return result;
  }
}
