import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One period's included credits of one account: the idempotency key of the monthly reset and of the
 * lazy grant at reservation time (primary key = account and period start), and the grant it made.
 */
@Entity({ name: 'plan_allowances' })
@Index('plan_allowances_grant_key', ['grantId'], { unique: true })
@Check('plan_allowances_amount_check', `"amount" > 0`)
@Check('plan_allowances_period_check', `"period_end" > "period_start"`)
export class PlanAllowance {
  @PrimaryColumn({ name: 'account_id', type: 'text' })
  accountId: string;

  @PrimaryColumn({ name: 'period_start', type: 'timestamptz' })
  periodStart: Date;

  @Column({ name: 'period_end', type: 'timestamptz' })
  periodEnd: Date;

  @Column({ name: 'grant_id', type: 'text' })
  grantId: string;

  /** Micro-credits granted. */
  @Column({ type: 'bigint' })
  amount: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
