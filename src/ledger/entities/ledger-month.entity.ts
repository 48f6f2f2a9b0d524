import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * How much one wallet's balance (grants + holds − debt) moved in one UTC calendar month: minus the
 * sum of the entries on `issued`, `consumption` and `expired` of its transactions dated in that
 * month. Every ledger write adds its change to its month's row in the statement that writes the
 * entries, so a statement's opening balance is the sum of the months before it (a row a month),
 * not of every entry of the account's history.
 */
@Entity({ name: 'ledger_months' })
export class LedgerMonth {
  @PrimaryColumn({ name: 'account_id', type: 'text' })
  accountId: string;

  /** The month's first day (UTC). */
  @PrimaryColumn({ type: 'date' })
  month: string;

  @Column({ name: 'balance_change', type: 'bigint' })
  balanceChange: string;
}
