import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One snapshot or volume: its account (an item belongs to the account of its first event), and
 * how far its hours are charged. `changedFrom` is set by an event that arrives for an hour already
 * charged, so the next accrual recomputes from there. Owned by the ancillary module.
 */
@Entity({ name: 'ancillary_items' })
@Index('ancillary_items_open_idx', ['itemKey'], { where: `"done" = false` })
export class AncillaryItem {
  @PrimaryColumn({ name: 'item_key', type: 'text' })
  itemKey: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ type: 'text' })
  kind: string;

  /** Charged up to here (exclusive); null before the first accrual. */
  @Column({ name: 'accrued_until', type: 'timestamptz', nullable: true })
  accruedUntil: Date | null;

  /** The earliest hour a late event changed; null when nothing is pending. */
  @Column({ name: 'changed_from', type: 'timestamptz', nullable: true })
  changedFrom: Date | null;

  /** Deleted and charged to its end, with no change pending: the accrual skips it. */
  @Column({ type: 'boolean', default: false })
  done: boolean;
}
