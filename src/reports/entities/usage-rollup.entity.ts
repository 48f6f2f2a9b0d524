import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * Settled usage of one bucket: maintained in the same transaction as each charge (a correction adds
 * its difference), so Σ credits of every rollup table always equals Σ `runtimes.charged`.
 */
abstract class UsageTotals {
  /** Runtimes settled (a runtime counts once, whatever its corrections). */
  @Column({ type: 'bigint', default: 0 })
  runtimes: string;

  @Column({ name: 'running_ms', type: 'bigint', default: 0 })
  runningMs: string;

  /** Micro-credits charged. */
  @Column({ type: 'bigint', default: 0 })
  credits: string;
}

/** Per account, environment and user: what the usage report by environment or by user reads. */
abstract class DetailedUsage extends UsageTotals {
  @PrimaryColumn({ name: 'account_id', type: 'text' })
  accountId: string;

  /** The environment's name ('' when unknown). */
  @PrimaryColumn({ type: 'text' })
  environment: string;

  /** '' when the runtime had no user. */
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId: string;
}

/** Per account only: what the usage report by account or by day and the top consumers read (a few rows per account and period). */
abstract class AccountUsage extends UsageTotals {
  @PrimaryColumn({ name: 'account_id', type: 'text' })
  accountId: string;
}

/** Per UTC hour (runtimes and running time: of the first settlement; credits: of the ledger posting): a report reads the hours of its partial days here. */
@Entity({ name: 'usage_rollups' })
@Index('usage_rollups_hour_idx', ['hour'])
export class UsageRollup extends DetailedUsage {
  @PrimaryColumn({ type: 'timestamptz' })
  hour: Date;
}

/** Per UTC day (as the hours): a report reads its whole days here. */
@Entity({ name: 'usage_daily_rollups' })
@Index('usage_daily_rollups_day_idx', ['day'])
export class UsageDailyRollup extends DetailedUsage {
  @PrimaryColumn({ type: 'date' })
  day: string;
}

/** Per UTC calendar month (`month` is its first day): a report reads its whole months here. */
@Entity({ name: 'usage_monthly_rollups' })
@Index('usage_monthly_rollups_month_idx', ['month'])
export class UsageMonthlyRollup extends DetailedUsage {
  @PrimaryColumn({ type: 'date' })
  month: string;
}

@Entity({ name: 'usage_account_hourly_rollups' })
@Index('usage_account_hourly_rollups_hour_idx', ['hour'])
export class UsageAccountHourlyRollup extends AccountUsage {
  @PrimaryColumn({ type: 'timestamptz' })
  hour: Date;
}

@Entity({ name: 'usage_account_daily_rollups' })
@Index('usage_account_daily_rollups_day_idx', ['day'])
export class UsageAccountDailyRollup extends AccountUsage {
  @PrimaryColumn({ type: 'date' })
  day: string;
}

@Entity({ name: 'usage_account_monthly_rollups' })
@Index('usage_account_monthly_rollups_month_idx', ['month'])
export class UsageAccountMonthlyRollup extends AccountUsage {
  @PrimaryColumn({ type: 'date' })
  month: string;
}
