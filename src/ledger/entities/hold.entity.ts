import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

export type HoldStatus = 'reserved' | 'settled' | 'voided' | 'expired';

/**
 * A two-phase hold. While reserved, the stored balance of ledger account `hold:<id>` is `amount`;
 * once resolved (settled, voided or expired) it is zero. `charged_amount` is the charge now
 * (settlement plus corrections), of which `debt_amount` was not covered by the wallet.
 */
@Entity({ name: 'holds' })
@Index('holds_expiry_idx', ['expiresAt'], { where: `"status" = 'reserved' AND "expires_at" IS NOT NULL` })
// Open holds for the /metrics gauges (count and amount of what is reserved now), without a scan.
@Index('holds_open_idx', ['accountId'], { where: `"status" = 'reserved'` })
@Index('holds_debt_idx', ['accountId'], { where: `"debt_amount" > 0` })
@Check('holds_status_check', `"status" IN ('reserved', 'settled', 'voided', 'expired')`)
@Check('holds_amount_check', `"amount" > 0`)
@Check(
  'holds_amounts_check',
  `"settled_amount" >= 0 AND "released_amount" >= 0 AND "settled_amount" <= "amount" AND "settled_amount" + "released_amount" <= "amount"`,
)
@Check(
  'holds_charged_check',
  `"charged_amount" >= 0 AND "charged_amount" <= "amount" AND "debt_amount" >= 0 AND "debt_amount" <= "charged_amount"`,
)
@Check(
  'holds_resolved_check',
  `("status" = 'reserved') = ("resolved_at" IS NULL) AND ("status" = 'reserved' OR "settled_amount" + "released_amount" = "amount")`,
)
export class Hold {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ type: 'text', default: 'reserved' })
  status: HoldStatus;

  /** Everything held (creation plus increases). */
  @Column({ type: 'bigint' })
  amount: string;

  /** Charged at settlement (the first outcome; corrections do not change it). */
  @Column({ name: 'settled_amount', type: 'bigint', default: 0 })
  settledAmount: string;

  /** Released at resolution. */
  @Column({ name: 'released_amount', type: 'bigint', default: 0 })
  releasedAmount: string;

  /** The charge now: settlement plus corrections. */
  @Column({ name: 'charged_amount', type: 'bigint', default: 0 })
  chargedAmount: string;

  /** Part of the charge the wallet could not pay (recorded as debt). */
  @Column({ name: 'debt_amount', type: 'bigint', default: 0 })
  debtAmount: string;

  @Column({ type: 'text', nullable: true })
  reference: string | null;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ type: 'bigint', default: 0 })
  version: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'resolved_at', type: 'timestamptz', nullable: true })
  resolvedAt: Date | null;
}
