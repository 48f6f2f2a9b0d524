import { Check, Column, Entity, Index, PrimaryColumn, Unique } from 'typeorm';

/**
 * What one item costs for one bucket (a storage item's UTC hour, an egress report): the quantity,
 * the rate-card version and price it was metered under (null price: unpriced, nothing charged), the
 * amount due and what the ledger has charged for it through holds settled at once (`holds`: each
 * hold's id and charge). `amount − charged` is what the wallet could not pay yet. Owned by the
 * ancillary module.
 */
@Entity({ name: 'ancillary_charges' })
@Check('ancillary_charges_amounts_check', `"amount" >= 0 AND "charged" >= 0 AND "charged" <= "amount"`)
@Unique('ancillary_charges_item_bucket_key', ['itemKey', 'bucket'])
@Index('ancillary_charges_account_bucket_idx', ['accountId', 'bucket'])
@Index('ancillary_charges_unpaid_idx', ['accountId'], { where: `"amount" > "charged"` })
export class AncillaryCharge {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ type: 'text' })
  kind: string;

  @Column({ name: 'item_key', type: 'text' })
  itemKey: string;

  @Column({ type: 'timestamptz' })
  bucket: Date;

  @Column({ name: 'runtime_id', type: 'text', nullable: true })
  runtimeId: string | null;

  @Column({ name: 'rate_card_version', type: 'text' })
  rateCardVersion: string;

  /** µcr per unit; null = unpriced. */
  @Column({ name: 'unit_price', type: 'bigint', nullable: true })
  unitPrice: string | null;

  /** Byte-milliseconds (storage, paused memory) or bytes (egress). */
  @Column({ type: 'numeric', precision: 40, scale: 0 })
  quantity: string;

  @Column({ type: 'bigint' })
  amount: string;

  @Column({ type: 'bigint', default: 0 })
  charged: string;

  @Column({ type: 'jsonb', default: () => `'[]'` })
  holds: { id: string; charged: string }[];

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}
