import { Check, Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** A seat mismatch found: a subscription's quantity drifting from the members table, or an invoice billed for other seats. */
@Entity({ name: 'stripe_seat_discrepancies' })
@Index('stripe_seat_discrepancies_account_idx', ['accountId', 'detectedAt'])
// The reconciliation report's period.
@Index('stripe_seat_discrepancies_detected_idx', ['detectedAt'])
@Index('stripe_seat_discrepancies_invoice_key', ['invoiceId'], { unique: true, where: `"invoice_id" IS NOT NULL` })
@Check('stripe_seat_discrepancies_kind_check', `"kind" IN ('quantity_drift', 'invoice_seats')`)
@Check(
  'stripe_seat_discrepancies_resolved_check',
  `("resolved_at" IS NULL) = ("resolved_by" IS NULL) AND ("resolved_at" IS NULL OR "kind" = 'invoice_seats')`,
)
@Check('stripe_seat_discrepancies_seats_check', `"stripe_quantity" >= 0 AND "active_seats" >= 0`)
export class SeatDiscrepancy {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'text' })
  kind: 'quantity_drift' | 'invoice_seats';

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ name: 'subscription_id', type: 'text' })
  subscriptionId: string;

  @Column({ name: 'invoice_id', type: 'text', nullable: true })
  invoiceId: string | null;

  @Column({ name: 'stripe_quantity', type: 'integer' })
  stripeQuantity: number;

  @Column({ name: 'active_seats', type: 'integer' })
  activeSeats: number;

  @Column({ name: 'detected_at', type: 'timestamptz' })
  detectedAt: Date;

  /** When the quantity was set right (drift); null for invoices (Stripe's invoice is not changed). */
  @Column({ name: 'corrected_at', type: 'timestamptz', nullable: true })
  correctedAt: Date | null;

  /**
   * An invoice flag a membership change received later showed wrong (the seats active when the
   * invoice was created were the ones it billed): when that was found. Null while the flag holds; a
   * later change that makes it wrong again opens it again.
   */
  @Column({ name: 'resolved_at', type: 'timestamptz', nullable: true })
  resolvedAt: Date | null;

  /** The membership change (its event id) that resolved the flag. */
  @Column({ name: 'resolved_by', type: 'text', nullable: true })
  resolvedBy: string | null;
}
