import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * Settled usage per account, per UTC hour (of the runtime's first settlement), per environment and
 * per user: maintained in the same transaction as each charge (a correction adds its difference),
 * so Σ credits always equals Σ `runtimes.charged`. Reports read this instead of the runtimes.
 */
@Entity({ name: 'usage_rollups' })
@Index('usage_rollups_hour_idx', ['hour'])
export class UsageRollup {
  @PrimaryColumn({ name: 'account_id', type: 'text' })
  accountId: string;

  @PrimaryColumn({ type: 'timestamptz' })
  hour: Date;

  /** The environment's name ('' when unknown). */
  @PrimaryColumn({ type: 'text' })
  environment: string;

  /** '' when the runtime had no user. */
  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId: string;

  /** Runtimes settled (a runtime counts once, whatever its corrections). */
  @Column({ type: 'bigint', default: 0 })
  runtimes: string;

  @Column({ name: 'running_ms', type: 'bigint', default: 0 })
  runningMs: string;

  /** Micro-credits charged. */
  @Column({ type: 'bigint', default: 0 })
  credits: string;
}

/**
 * The same usage per UTC day (of the runtime's first settlement), written in the same statement as
 * the hourly rollup: a report reads whole days here and only its partial days by the hour.
 */
@Entity({ name: 'usage_daily_rollups' })
@Index('usage_daily_rollups_day_idx', ['day'])
export class UsageDailyRollup {
  @PrimaryColumn({ name: 'account_id', type: 'text' })
  accountId: string;

  @PrimaryColumn({ type: 'date' })
  day: string;

  @PrimaryColumn({ type: 'text' })
  environment: string;

  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId: string;

  @Column({ type: 'bigint', default: 0 })
  runtimes: string;

  @Column({ name: 'running_ms', type: 'bigint', default: 0 })
  runningMs: string;

  @Column({ type: 'bigint', default: 0 })
  credits: string;
}

/** The same usage per UTC calendar month (`month` is its first day): a month's report reads one row per account, environment and user. */
@Entity({ name: 'usage_monthly_rollups' })
@Index('usage_monthly_rollups_month_idx', ['month'])
export class UsageMonthlyRollup {
  @PrimaryColumn({ name: 'account_id', type: 'text' })
  accountId: string;

  @PrimaryColumn({ type: 'date' })
  month: string;

  @PrimaryColumn({ type: 'text' })
  environment: string;

  @PrimaryColumn({ name: 'user_id', type: 'text' })
  userId: string;

  @Column({ type: 'bigint', default: 0 })
  runtimes: string;

  @Column({ name: 'running_ms', type: 'bigint', default: 0 })
  runningMs: string;

  @Column({ type: 'bigint', default: 0 })
  credits: string;
}
