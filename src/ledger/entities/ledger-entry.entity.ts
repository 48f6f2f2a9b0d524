import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One line of a ledger transaction: a signed amount on one ledger account of the transaction's
 * wallet. Append-only (a trigger refuses UPDATE and DELETE); the lines of a transaction are inserted
 * together and sum to zero (checked by a trigger at insert).
 */
@Entity({ name: 'ledger_entries' })
@Check('ledger_entries_amount_check', `"amount" <> 0`)
export class LedgerEntry {
  @PrimaryColumn({ name: 'transaction_id', type: 'bigint' })
  transactionId: string;

  @PrimaryColumn({ type: 'smallint' })
  line: number;

  /** `grant:<id>`, `hold:<id>`, `issued`, `consumption`, `expired` or `debt`. */
  @Column({ name: 'ledger_account', type: 'text' })
  ledgerAccount: string;

  @Column({ type: 'bigint' })
  amount: string;
}
