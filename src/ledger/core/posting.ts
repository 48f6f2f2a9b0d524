/**
 * Double-entry postings. Every ledger account belongs to one wallet (account id); its key says
 * what it is: `grant:<id>` (a grant's unheld credits), `hold:<id>` (credits held by a hold),
 * `issued` (counterpart of every grant: minus what was ever granted), `consumption` (charged),
 * `expired`, and `debt` (minus what the wallet owes).
 */
export type LedgerAccount = `grant:${string}` | `hold:${string}` | 'issued' | 'consumption' | 'expired' | 'debt';

export const Accounts = {
  grant: (id: string): LedgerAccount => `grant:${id}`,
  hold: (id: string): LedgerAccount => `hold:${id}`,
  issued: 'issued',
  consumption: 'consumption',
  expired: 'expired',
  debt: 'debt',
} as const;

export interface Entry {
  account: LedgerAccount;
  amount: bigint;
}

/** Collects transfers and nets them per account into the entries of one transaction. */
export class Posting {
  private readonly lines = new Map<LedgerAccount, bigint>();

  move(from: LedgerAccount, to: LedgerAccount, amount: bigint): this {
    if (amount < 0n) throw new RangeError(`a transfer must not be negative (got ${amount})`);
    if (amount === 0n || from === to) return this;
    this.lines.set(from, (this.lines.get(from) ?? 0n) - amount);
    this.lines.set(to, (this.lines.get(to) ?? 0n) + amount);
    return this;
  }

  entries(): Entry[] {
    const entries = [...this.lines].filter(([, a]) => a !== 0n).map(([account, amount]) => ({ account, amount }));
    assertBalanced(entries);
    return entries;
  }
}

export function assertBalanced(entries: readonly Entry[]): void {
  let sum = 0n;
  for (const e of entries) sum += e.amount;
  if (sum !== 0n) throw new Error(`unbalanced transaction: entries sum to ${sum}`);
}

/** The change of each wallet-level balance implied by a transaction's entries. */
export interface WalletDelta {
  grants: bigint;
  holds: bigint;
  issued: bigint;
  consumed: bigint;
  expired: bigint;
  debt: bigint;
}

export function walletDelta(entries: readonly Entry[]): WalletDelta {
  const d: WalletDelta = { grants: 0n, holds: 0n, issued: 0n, consumed: 0n, expired: 0n, debt: 0n };
  for (const e of entries) {
    if (e.account.startsWith('grant:')) d.grants += e.amount;
    else if (e.account.startsWith('hold:')) d.holds += e.amount;
    else if (e.account === 'issued') d.issued += e.amount;
    else if (e.account === 'consumption') d.consumed += e.amount;
    else if (e.account === 'expired') d.expired += e.amount;
    else d.debt += e.amount;
  }
  return d;
}

/** The change of each grant's balance implied by a transaction's entries. */
export function grantDeltas(entries: readonly Entry[]): { grantId: string; amount: bigint }[] {
  return entries
    .filter((e) => e.account.startsWith('grant:'))
    .map((e) => ({ grantId: e.account.slice('grant:'.length), amount: e.amount }));
}
