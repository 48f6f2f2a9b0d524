import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A seat quantity push to Stripe, planned before it is sent and sent as planned (same idempotency
 * key, same quantity and `proration_date`) however often it is retried. Sent in id order per account.
 */
@Entity({ name: 'stripe_seat_pushes' })
@Index('stripe_seat_pushes_key', ['idempotencyKey'], { unique: true })
@Index('stripe_seat_pushes_pending_idx', ['accountId', 'id'], { where: `"sent_at" IS NULL AND "dropped_at" IS NULL` })
@Index('stripe_seat_pushes_item_idx', ['itemId', 'id'])
@Check('stripe_seat_pushes_quantity_check', `"quantity" >= 0 AND "from_quantity" >= 0`)
@Check('stripe_seat_pushes_source_check', `"source" IN ('sync', 'reconcile')`)
@Check('stripe_seat_pushes_done_check', `"sent_at" IS NULL OR "dropped_at" IS NULL`)
export class SeatPush {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ name: 'subscription_id', type: 'text' })
  subscriptionId: string;

  @Column({ name: 'item_id', type: 'text' })
  itemId: string;

  @Column({ type: 'integer' })
  quantity: number;

  /** The quantity Stripe was expected to have before it (the quantity of the push planned before). */
  @Column({ name: 'from_quantity', type: 'integer' })
  fromQuantity: number;

  @Column({ name: 'proration_date', type: 'timestamptz' })
  prorationDate: Date;

  @Column({ name: 'idempotency_key', type: 'text' })
  idempotencyKey: string;

  /** `sync`: dated at membership changes; `reconcile`: a quantity changed on Stripe's side, set back dated now. */
  @Column({ type: 'text' })
  source: 'sync' | 'reconcile';

  @CreateDateColumn({ name: 'planned_at', type: 'timestamptz' })
  plannedAt: Date;

  @Column({ name: 'sent_at', type: 'timestamptz', nullable: true })
  sentAt: Date | null;

  /** Not sent: the subscription item was replaced, or the date fell before a new period (sent again from its start). */
  @Column({ name: 'dropped_at', type: 'timestamptz', nullable: true })
  droppedAt: Date | null;
}
