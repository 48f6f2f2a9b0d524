import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export const SUBSCRIPTION_STATUSES = [
  'incomplete',
  'incomplete_expired',
  'trialing',
  'active',
  'past_due',
  'canceled',
  'unpaid',
  'paused',
] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

/** An account's Team subscription in Stripe, as last known from Stripe (answers and webhooks). */
@Entity({ name: 'stripe_subscriptions' })
@Index('stripe_subscriptions_subscription_key', ['subscriptionId'], { unique: true })
@Index('stripe_subscriptions_customer_idx', ['customerId'])
@Check(
  'stripe_subscriptions_status_check',
  `"status" IN ('incomplete', 'incomplete_expired', 'trialing', 'active', 'past_due', 'canceled', 'unpaid', 'paused')`,
)
@Check('stripe_subscriptions_quantity_check', `"seat_quantity" >= 0`)
@Check('stripe_subscriptions_period_check', `"current_period_end" IS NULL OR "current_period_end" > "current_period_start"`)
export class StripeSubscription {
  @PrimaryColumn({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ name: 'customer_id', type: 'text' })
  customerId: string;

  @Column({ name: 'subscription_id', type: 'text' })
  subscriptionId: string;

  @Column({ name: 'base_item_id', type: 'text', nullable: true })
  baseItemId: string | null;

  @Column({ name: 'seat_item_id', type: 'text', nullable: true })
  seatItemId: string | null;

  @Column({ type: 'text' })
  status: SubscriptionStatus;

  /** The seat item's quantity in Stripe, as last read or set. */
  @Column({ name: 'seat_quantity', type: 'integer', default: 0 })
  seatQuantity: number;

  @Column({ name: 'current_period_start', type: 'timestamptz', nullable: true })
  currentPeriodStart: Date | null;

  @Column({ name: 'current_period_end', type: 'timestamptz', nullable: true })
  currentPeriodEnd: Date | null;

  /** Stripe `created` (seconds) of the newest event whose subscription state was applied: older ones are not. */
  @Column({ name: 'state_event_created', type: 'bigint', default: 0 })
  stateEventCreated: string;

  /**
   * The `created` of the subscription event its items (and seat quantity) come from: ordered apart
   * from the state, which invoice events move too, so that a quantity changed on Stripe's side is
   * applied even when a later invoice event came first.
   */
  @Column({ name: 'items_event_created', type: 'bigint', default: 0 })
  itemsEventCreated: string;

  @Column({ name: 'past_due_since', type: 'timestamptz', nullable: true })
  pastDueSince: Date | null;

  /**
   * When Stripe ended the subscription (its `ended_at`; the cancellation event's time when the object
   * has none), set with the status `canceled`: an invoice paid after it grants no cycle allowance.
   */
  @Column({ name: 'ended_at', type: 'timestamptz', nullable: true })
  endedAt: Date | null;

  /**
   * The plan overrides the account had when the cancellation moved it off the subscription's plan
   * (they are dropped then): an invoice of a cycle paid before the end, delivered after, grants on them.
   */
  @Column({ name: 'ended_overrides', type: 'jsonb', nullable: true })
  endedOverrides: Record<string, unknown> | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
