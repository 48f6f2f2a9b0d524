import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** A threshold notified for a limit in a period: its key makes each notification once per cause. */
@Entity({ name: 'spend_limit_alerts' })
// The spend-limits report's period.
@Index('spend_limit_alerts_notified_idx', ['notifiedAt'])
export class SpendLimitAlert {
  @PrimaryColumn({ name: 'limit_id', type: 'text' })
  limitId: string;

  @PrimaryColumn({ name: 'period_start', type: 'timestamptz' })
  periodStart: Date;

  /** `threshold_crossed` (at `threshold` percent) or `reached` (threshold 100). */
  @PrimaryColumn({ type: 'text' })
  kind: string;

  @PrimaryColumn({ type: 'integer' })
  threshold: number;

  @Column({ name: 'spent_micros', type: 'bigint' })
  spentMicros: string;

  /** The limit in force when the alert fired (the limit may change later); null on alerts from before it was recorded. */
  @Column({ name: 'limit_micros', type: 'bigint', nullable: true })
  limitMicros: string | null;

  @CreateDateColumn({ name: 'notified_at', type: 'timestamptz' })
  notifiedAt: Date;
}
