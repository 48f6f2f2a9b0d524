import { Check, Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export const TRANSACTION_KINDS = ['reservation', 'settlement', 'release', 'void', 'grant', 'top-up', 'expiry', 'adjustment'] as const;
export type TransactionKind = (typeof TRANSACTION_KINDS)[number];

/**
 * One ledger transaction of one wallet: a group of balanced entries, written once (append-only),
 * keyed by an idempotency key unique per account. It records the wallet's balances after it and
 * the structured facts that explain it.
 */
@Entity({ name: 'ledger_transactions' })
@Index('ledger_transactions_idempotency_key', ['accountId', 'idempotencyKey'], { unique: true })
// The statement's index. Partial (on a predicate every row meets) so that only the statement
// query, which states it, can use it: a lookup by (account, idempotency key) must use the unique
// index, whatever the planner's statistics say about how many rows an account has.
@Index('ledger_transactions_account_idx', ['accountId', 'id'], { where: `"kind" <> ''` })
// An account's transactions of a period (the month's spend on the wallet, a statement's movements),
// without its history. Partial for the same reason as the statement's index above.
@Index('ledger_transactions_account_time_idx', ['accountId', 'createdAt'], { where: `"kind" <> ''` })
// The credits report's period over the fleet. Without reservations (about half the rows), whose
// entries only move credits from grants to a hold: never on `issued`, `consumption` or `expired`.
@Index('ledger_transactions_time_idx', ['createdAt'], { where: `"kind" <> 'reservation'` })
@Check(
  'ledger_transactions_kind_check',
  `"kind" IN ('reservation', 'settlement', 'release', 'void', 'grant', 'top-up', 'expiry', 'adjustment')`,
)
export class LedgerTransaction {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'account_id', type: 'text' })
  accountId: string;

  @Column({ type: 'text' })
  kind: TransactionKind;

  @Column({ name: 'idempotency_key', type: 'text' })
  idempotencyKey: string;

  /** SHA-256 of the canonical JSON of the request. */
  @Column({ type: 'text' })
  fingerprint: string;

  /** Signed change the customer sees: −held for a reservation, −charge, +release, +grant, −expiry. */
  @Column({ type: 'bigint' })
  amount: string;

  @Column({ name: 'hold_id', type: 'text', nullable: true })
  holdId: string | null;

  @Column({ name: 'grant_id', type: 'text', nullable: true })
  grantId: string | null;

  @Column({ type: 'text', nullable: true })
  reference: string | null;

  @Column({ name: 'total_after', type: 'bigint' })
  totalAfter: string;

  @Column({ name: 'held_after', type: 'bigint' })
  heldAfter: string;

  @Column({ name: 'available_after', type: 'bigint' })
  availableAfter: string;

  @Column({ type: 'jsonb' })
  explanation: Record<string, unknown>;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
