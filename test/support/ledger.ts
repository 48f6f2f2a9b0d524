import type { DataSource } from 'typeorm';
import { AccountsService } from '../../src/accounts/accounts.service';
import { LedgerService } from '../../src/ledger/ledger.service';
import { ManualClock } from '../../src/infra/clock/clock';
import { startApp, uid, type Harness } from './app';

/** Micro-credits from credits, for readable tests: c(10) = 10 credits. */
export function c(credits: number): bigint {
  return BigInt(Math.round(credits * 1_000_000));
}

export interface LedgerHarness extends Harness {
  ledger: LedgerService;
  accounts: AccountsService;
  clock: ManualClock;
  /** A new account (with its empty wallet). */
  account(id?: string): Promise<string>;
}

/** The application on the run's database with a manual clock, and the ledger's services. */
export async function startLedger(at = '2026-12-02T09:00:00.000Z'): Promise<LedgerHarness> {
  const clock = new ManualClock(new Date(at));
  const h = await startApp({ clock });
  const ledger = h.app.get(LedgerService);
  const accounts = h.app.get(AccountsService);
  return {
    ...h,
    ledger,
    accounts,
    clock,
    account: async (id = uid('acc')) => {
      // Enterprise without included credits: the wallet holds only what a test grants.
      await accounts.upsertTx({ id, kind: 'user', plan: 'enterprise' }, 'test', null);
      return id;
    },
  };
}

/** Every row of an account's ledger entries summed per ledger account. */
export async function entrySums(ds: DataSource, accountId: string): Promise<Record<string, bigint>> {
  const found: { ledger_account: string; total: string }[] = await ds.query(
    `SELECT e.ledger_account, sum(e.amount)::text AS total FROM ledger_entries e
     JOIN ledger_transactions t ON t.id = e.transaction_id WHERE t.account_id = $1 GROUP BY e.ledger_account`,
    [accountId],
  );
  return Object.fromEntries(found.map((r) => [r.ledger_account, BigInt(r.total)]));
}
