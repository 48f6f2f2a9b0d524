import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/** A paid top-up Checkout Session (one per session, whatever the number of events carrying it) and its grant. */
@Entity({ name: 'stripe_top_ups' })
@Index('stripe_top_ups_account_idx', ['accountId'])
@Index('stripe_top_ups_payment_intent_key', ['paymentIntentId'], { unique: true, where: `"payment_intent_id" IS NOT NULL` })
@Index('stripe_top_ups_grant_key', ['grantId'], { unique: true })
@Check('stripe_top_ups_credits_check', `"credits" > 0`)
@Check('stripe_top_ups_clawed_check', `"clawed_back" >= 0 AND "clawed_back" <= "credits"`)
export class StripeTopUp {
  @PrimaryColumn({ name: 'session_id', type: 'text' })
  sessionId: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ type: 'text' })
  pack: string;

  /** Micro-credits granted. */
  @Column({ type: 'bigint' })
  credits: string;

  @Column({ name: 'amount_cents', type: 'integer', nullable: true })
  amountCents: number | null;

  @Column({ name: 'payment_intent_id', type: 'text', nullable: true })
  paymentIntentId: string | null;

  @Column({ name: 'grant_id', type: 'text' })
  grantId: string;

  /** Micro-credits taken back after refunds and disputes. */
  @Column({ name: 'clawed_back', type: 'bigint', default: 0 })
  clawedBack: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
