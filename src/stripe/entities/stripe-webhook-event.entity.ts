import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** Each Stripe event received and what came of it (applied, ignored, failed), for operators. Owned by StripeEventsService. */
@Entity({ name: 'stripe_webhook_events' })
@Index('stripe_webhook_events_received_idx', ['receivedAt'])
@Check('stripe_webhook_events_outcome_check', `"outcome" IN ('applied', 'ignored', 'failed')`)
export class StripeWebhookEvent {
  @PrimaryColumn({ name: 'event_id', type: 'text' })
  eventId: string;

  @Column({ type: 'text' })
  type: string;

  @Column({ type: 'text' })
  outcome: string;

  @Column({ name: 'account_id', type: 'text', nullable: true })
  accountId: string | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** Deliveries of this event id (a duplicate counts, its effect does not repeat). */
  @Column({ type: 'integer', default: 1 })
  deliveries: number;

  @Column({ name: 'received_at', type: 'timestamptz' })
  receivedAt: Date;
}
