import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * What a membership change received did to an account's active members over time: `delta` seats
 * from `effective_at` on (the change's own `occurredAt`, or the date of a later change it overrides).
 * Written in the membership transaction; planned into dated seat pushes (`planned_at`) under the
 * account's seat-plan lock.
 */
@Entity({ name: 'stripe_seat_changes' })
@Index('stripe_seat_changes_unplanned_idx', ['accountId', 'effectiveAt'], { where: `"planned_at" IS NULL` })
@Check('stripe_seat_changes_delta_check', `"delta" <> 0`)
export class SeatChange {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  /** The membership change that caused it. */
  @Column({ name: 'change_id', type: 'text' })
  changeId: string;

  @Column({ name: 'effective_at', type: 'timestamptz' })
  effectiveAt: Date;

  @Column({ type: 'integer' })
  delta: number;

  @Column({ name: 'planned_at', type: 'timestamptz', nullable: true })
  plannedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
