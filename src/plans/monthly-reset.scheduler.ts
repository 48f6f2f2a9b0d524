import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { JobsService } from 'src/jobs/jobs.service';
import { AllowancesService } from './allowances.service';

/** 00:00:00 UTC on the 1st of every month. */
export const MONTHLY_RESET_CRON = '0 0 0 1 * *';

/**
 * Registers the `monthly-reset` job (POST /v1/admin/jobs/monthly-reset/run) and, when cron is
 * enabled, schedules it at 00:00 UTC on the 1st and runs it once at startup: the reset grants only
 * what is missing for the current month, so a run missed while the service was down is caught up.
 * Likewise `cycle-allowances`, every minute: the allowances of accounts on a billing cycle.
 * Either way each runs under its job's advisory lock (one instance at a time).
 */
@Injectable()
export class MonthlyResetScheduler implements OnApplicationBootstrap {
  private readonly logger = new Logger('MonthlyReset');

  constructor(
    private readonly jobs: JobsService,
    private readonly allowances: AllowancesService,
    private readonly schedules: SchedulerRegistry,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.jobs.register('monthly-reset', () => this.allowances.monthlyReset());
    this.jobs.register('cycle-allowances', () => this.allowances.cycleAllowances());
    if (!this.config.cronEnabled) return;
    // Billing cycles start at any minute of any day: their allowances are looked for every minute.
    this.schedules.addInterval(
      'cycle-allowances',
      setInterval(() => void this.jobs.tick('cycle-allowances'), 60_000),
    );
    this.jobs.scheduledEvery('cycle-allowances', 60_000);
    const job = CronJob.from({
      cronTime: MONTHLY_RESET_CRON,
      onTick: () => void this.jobs.tick('monthly-reset'),
      timeZone: 'UTC',
      start: false,
    });
    this.schedules.addCronJob('monthly-reset', job);
    job.start();
    this.jobs.scheduledEvery('monthly-reset', 31 * 24 * 3_600_000);
    this.logger.log('monthly reset scheduled at 00:00 UTC on the 1st; catching up now');
    setImmediate(() => void this.jobs.tick('monthly-reset'));
  }
}
