import type { InvoiceLineSnapshot } from '../stripe-objects';
import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** A subscription invoice seen through webhooks, with the seats it billed and the seats active then. */
@Entity({ name: 'stripe_invoices' })
@Index('stripe_invoices_account_idx', ['accountId'])
@Check('stripe_invoices_status_check', `"status" IN ('paid', 'payment_failed')`)
@Check('stripe_invoices_period_check', `"period_end" > "period_start"`)
export class StripeInvoice {
  @PrimaryColumn({ name: 'invoice_id', type: 'text' })
  invoiceId: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ name: 'subscription_id', type: 'text' })
  subscriptionId: string;

  @Column({ type: 'text' })
  status: 'paid' | 'payment_failed';

  @Column({ name: 'period_start', type: 'timestamptz' })
  periodStart: Date;

  @Column({ name: 'period_end', type: 'timestamptz' })
  periodEnd: Date;

  /** The seat line's quantity (null when the invoice has no seat line). */
  @Column({ name: 'seat_quantity', type: 'integer', nullable: true })
  seatQuantity: number | null;

  /**
   * The invoice's lines as Stripe invoiced them (price, quantity, amount in cents, proration), from
   * the signed webhook; null for an invoice recorded before amounts were kept.
   */
  @Column({ type: 'jsonb', nullable: true })
  lines: InvoiceLineSnapshot[] | null;

  /** What the invoice bills in cents, discounts and tax included (Stripe's `total`). */
  @Column({ name: 'total_cents', type: 'bigint', nullable: true })
  totalCents: string | null;

  @Column({ type: 'text', nullable: true })
  currency: string | null;

  /** When Stripe says it was paid (`status_transitions.paid_at`, else the `invoice.paid` event's time); null while unpaid. */
  @Column({ name: 'paid_at', type: 'timestamptz', nullable: true })
  paidAt: Date | null;

  /**
   * When Stripe created the invoice (its `created`); null for an invoice recorded before it was kept
   * (such a row is not rechecked by late membership changes).
   */
  @Column({ type: 'timestamptz', nullable: true })
  created: Date | null;

  /**
   * Active members when the invoice was created (its `created`, else its period's start), as the
   * membership history says: a membership change dated before that and received later recomputes it.
   */
  @Column({ name: 'active_seats', type: 'integer' })
  activeSeats: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
