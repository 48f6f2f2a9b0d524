import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { AuditService } from '../../src/audit/audit.service';
import { ManualClock } from '../../src/infra/clock/clock';
import { lineAfterWrite, lineAfterWriteSql, type LowBalanceLine } from '../../src/ledger/core/low-balance';
import { LedgerService } from '../../src/ledger/ledger.service';
import { grantInBulk } from '../../src/ledger/operations/grant-in-bulk';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';

const LINE = 5_000_000n;

// The low-balance line's re-arm rule is decided in memory (a batch's wallets) and by PostgreSQL (the ledger's write
// statement, the monthly reset's bulk grant). Both come from core/low-balance.ts; these tests hold them equal.
describe('the low-balance re-arm rule, in TypeScript and in PostgreSQL', () => {
  let db: FreshDatabase;
  let ds: DataSource;

  beforeAll(async () => {
    db = await freshDatabase('lowbalance');
    ds = db.ds;
  });
  afterAll(() => db?.drop());

  it('decides as lineAfterWrite on every case: no line, below, at and above it, negative and beyond 2^53', async () => {
    const lines = [null, 1n, LINE, 2n ** 62n];
    const rises = [0n, 7n, 2n ** 62n];
    const available = [-(2n ** 62n), -1n, 0n, 1n, LINE - 1n, LINE, LINE + 1n, 2n ** 53n + 1n, 2n ** 62n];
    const cases = lines.flatMap((line) => rises.flatMap((r) => available.map((a) => ({ mark: { line, rises: r }, available: a }))));
    const sql = lineAfterWriteSql({ line: 'c.line', rises: 'c.rises', available: 'c.available' });
    const found = await ds.query<{ line: string | null; rises: string }[]>(
      `SELECT (${sql.line})::text AS line, (${sql.rises})::text AS rises
       FROM jsonb_to_recordset($1::jsonb) AS c(ord int, line bigint, rises bigint, available bigint) ORDER BY c.ord`,
      [
        JSON.stringify(
          cases.map((c, ord) => ({
            ord,
            line: c.mark.line?.toString() ?? null,
            rises: c.mark.rises.toString(),
            available: c.available.toString(),
          })),
        ),
      ],
    );
    const inSql = found.map((r): LowBalanceLine => ({ line: r.line === null ? null : BigInt(r.line), rises: BigInt(r.rises) }));
    expect(inSql).toEqual(cases.map((c) => lineAfterWrite(c.mark, c.available)));
    // The cases include both outcomes.
    expect(inSql.filter((m) => m.line === null).length).toBeGreaterThan(cases.filter((c) => c.mark.line === null).length);
    expect(inSql.some((m) => m.line !== null)).toBe(true);
  });

  it('is what both write statements do: a grant to the line re-arms it, one micro-credit short does not', async () => {
    const clock = new ManualClock(new Date('2031-12-10T10:00:00.000Z'));
    const audit = new AuditService(ds, clock);
    const ledger = new LedgerService(ds, audit, clock);
    const accounts = { write: ['low_write_at', 'low_write_short'], bulk: ['low_bulk_at', 'low_bulk_short'] };
    const all = [...accounts.write, ...accounts.bulk];
    await ds.query(`INSERT INTO accounts (id, kind, plan) SELECT unnest($1::text[]), 'user', 'free'`, [all]);
    await ds.query(`INSERT INTO wallets (account_id) SELECT unnest($1::text[])`, [all]);
    const mark: LowBalanceLine = { line: LINE, rises: 3n };
    await ds.transaction(async (em) => {
      for (const accountId of all) await ledger.markLowBalance(em, accountId, { line: LINE, rises: mark.rises });
    });
    const amount = (accountId: string) => (accountId.endsWith('_at') ? LINE : LINE - 1n);

    // The ledger's write statement (an operation alone), then the monthly reset's.
    for (const accountId of accounts.write) {
      await ledger.grantTx({
        accountId,
        source: 'admin',
        amount: amount(accountId),
        expiresAt: null,
        idempotencyKey: 'g',
        reason: 'r',
        actor: 't',
      });
    }
    const result = await ds.transaction((em) =>
      grantInBulk(em, audit, {
        grants: accounts.bulk.map((accountId) => ({
          accountId,
          grantId: `grant_${accountId}`,
          amount: amount(accountId),
          reason: 'reset',
        })),
        source: 'plan_allowance',
        expiresAt: new Date('2032-01-01T00:00:00.000Z'),
        idempotencyKey: 'allowance:x',
        actor: 'system',
        correlationId: null,
        now: clock.now(),
        notificationsTopic: 'notifications.test',
      }),
    );
    expect(result.granted).toEqual([...accounts.bulk].sort());

    const wallets = await ds.query<{ account_id: string; line: string | null; rises: string }[]>(
      `SELECT account_id, low_balance_line::text AS line, low_balance_rises::text AS rises FROM wallets WHERE account_id = ANY($1)`,
      [all],
    );
    const written = new Map(wallets.map((w) => [w.account_id, { line: w.line === null ? null : BigInt(w.line), rises: BigInt(w.rises) }]));
    for (const accountId of all) {
      expect({ accountId, mark: written.get(accountId) }).toEqual({ accountId, mark: lineAfterWrite(mark, amount(accountId)) });
    }
    expect(written.get('low_write_at')).toEqual({ line: null, rises: 4n });
    expect(written.get('low_bulk_short')).toEqual({ line: LINE, rises: 3n });
  });
});
