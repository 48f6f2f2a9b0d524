import { Check, Column, Entity, ForeignKey, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { Account } from 'src/accounts/entities/account.entity';

/**
 * One wallet per account: the lock every ledger write of the account takes first, and the stored
 * balances of the wallet-level ledger accounts (all in micro-credits). Each column equals the sum
 * of the entries of its ledger account(s); together they sum to zero (double entry).
 */
@Entity({ name: 'wallets' })
@Check('wallets_grants_balance_check', `"grants_balance" >= 0`)
@Check('wallets_holds_balance_check', `"holds_balance" >= 0`)
@Check('wallets_issued_check', `"issued" <= 0`)
@Check('wallets_expired_check', `"expired" >= 0`)
@Check('wallets_debt_check', `"debt" <= 0`)
@Check('wallets_low_balance_line_check', `"low_balance_line" > 0`)
@Check('wallets_low_balance_rises_check', `"low_balance_rises" >= 0`)
@Check('wallets_balanced_check', `"grants_balance" + "holds_balance" + "issued" + "consumed" + "expired" + "debt" = 0`)
export class Wallet {
  @PrimaryColumn({ name: 'account_id', type: 'text' })
  @ForeignKey(() => Account, { name: 'wallets_account_fk', onDelete: 'RESTRICT' })
  accountId: string;

  /** Σ grant:* — unheld credits of every grant (including grants past expiry not yet swept). */
  @Column({ name: 'grants_balance', type: 'bigint', default: 0 })
  grantsBalance: string;

  /** Σ hold:* — credits held by open holds. */
  @Column({ name: 'holds_balance', type: 'bigint', default: 0 })
  holdsBalance: string;

  /** Minus everything ever granted. */
  @Column({ type: 'bigint', default: 0 })
  issued: string;

  /** Everything charged (settlements and adjustments). */
  @Column({ type: 'bigint', default: 0 })
  consumed: string;

  @Column({ type: 'bigint', default: 0 })
  expired: string;

  /** Minus what the wallet owes (charges it could not pay). */
  @Column({ type: 'bigint', default: 0 })
  debt: string;

  /** Bumped by every write of the account's ledger (grants, holds, entries), under this row's lock. */
  @Column({ type: 'bigint', default: 0 })
  version: string;

  /**
   * The threshold of the last `wallet.low_balance` the account was sent (the line its available
   * balance fell below), until a ledger write leaves the available balance at or above it: then
   * null, and `low_balance_rises` counts one more. Set by admission (through the ledger) with the
   * notice; not a balance, so not counted in `version`.
   */
  @Column({ name: 'low_balance_line', type: 'bigint', nullable: true })
  lowBalanceLine: string | null;

  /** How many times the available balance came back to the line above: `wallet.low_balance`'s cause names the crossing by it. */
  @Column({ name: 'low_balance_rises', type: 'bigint', default: 0 })
  lowBalanceRises: string;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
