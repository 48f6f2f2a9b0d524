import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LedgerService } from '../../src/ledger/ledger.service';
import type { LifecycleEvent } from '../../src/metering/lifecycle-event';
import { LifecycleIngestService, SETTLEMENTS_PER_TRANSACTION } from '../../src/metering/lifecycle-ingest.service';
import { fundedAccount, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';

const minute = 60_000;

/**
 * A Kafka chunk's terminated runtimes are settled as one ledger batch: every wallet locked once, in
 * account-id order — the order reservations lock theirs in — so settlements and reservations of the
 * same accounts running side by side wait for each other but never deadlock.
 */
describe('settlements of a chunk as one ledger batch', () => {
  let h: Harness;
  let admin: string;
  let cp: string;
  let ingest: LifecycleIngestService;

  beforeAll(async () => {
    h = await startApp();
    admin = await h.key('admin');
    cp = await h.key('control-plane');
    ingest = h.app.get(LifecycleIngestService);
  });
  afterAll(() => h.close());

  const event = (accountId: string, runtimeId: string, type: LifecycleEvent['type'], at: Date, seq: number): LifecycleEvent => ({
    id: uid('evt'),
    type,
    occurredAt: at,
    accountId,
    runtimeId,
    seq,
    data: type === 'runtime.terminated' ? { reason: 'user' } : {},
  });
  const deadlocks = async (): Promise<number> => {
    // The statistics are flushed when a backend goes idle: wait for it.
    await new Promise((r) => setTimeout(r, 1_200));
    const [row] = await h.ds.query(`SELECT deadlocks::int AS n FROM pg_stat_database WHERE datname = current_database()`);
    return row.n;
  };

  it('runs reservations and settlements of the same accounts at once without a deadlock, each runtime charged exactly once', async () => {
    // Runtime ids sort in the reverse order of their accounts' ids, so that a chunk meets its
    // runtimes (sorted) in the opposite order of the wallets a reservation batch locks.
    const accounts = (await Promise.all(Array.from({ length: 8 }, () => fundedAccount(h, admin, { credits: '1000.000000' })))).sort();
    const tag = uid('r');
    const runtimes = accounts.flatMap((accountId, a) =>
      Array.from({ length: 12 }, (_, i) => ({ accountId, runtimeId: `${tag}_${accounts.length - a}_${String(i).padStart(2, '0')}` })),
    );
    for (const r of runtimes) {
      const res = await h.request('POST', '/v1/reservations', { key: cp, body: { ...r, ...SMALL, minutes: 60 } });
      expect(res.status).toBe(201);
    }
    const t0 = new Date(Date.now() - 2 * 60 * minute);
    await ingest.ingest(runtimes.map((r) => event(r.accountId, r.runtimeId, 'runtime.started', t0, 1)));
    const before = await deadlocks();

    // Runtime i runs i + 1 minutes at 1 credit/hour: ceil(1,000,000 × (i + 1) × 60,000 / 3,600,000) µcr, at most the hold.
    const chunks = [0, 1, 2, 3].map((c) =>
      runtimes
        .filter((_, i) => i % 4 === c)
        .map((r) => event(r.accountId, r.runtimeId, 'runtime.terminated', new Date(t0.getTime() + (runtimes.indexOf(r) + 1) * minute), 2)),
    );
    const launches = accounts.flatMap((accountId) =>
      Array.from({ length: 10 }, () =>
        h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), ...SMALL, minutes: 30 } }),
      ),
    );
    const [settled, reserved] = await Promise.all([Promise.all(chunks.map((c) => ingest.ingest(c))), Promise.all(launches)]);

    expect(settled.map((s) => s.accepted)).toEqual(chunks.map((c) => c.length));
    expect(reserved.map((r) => r.status)).toEqual(launches.map(() => 201));
    expect((await deadlocks()) - before).toBe(0);
    const rows: { runtime_id: string; status: string; charged: string; released: string }[] = await h.ds.query(
      `SELECT runtime_id, status, charged::text, released::text FROM runtimes WHERE runtime_id = ANY($1) ORDER BY runtime_id`,
      [runtimes.map((r) => r.runtimeId)],
    );
    // Capped at the hold (60 minutes = 1 credit): the runtimes that ran longer are charged the hold.
    const expected = (i: number) => minBig(1_000_000n, BigInt(Math.ceil((1_000_000 * (i + 1) * minute) / 3_600_000)));
    for (const [i, r] of runtimes.entries()) {
      const row = rows.find((x) => x.runtime_id === r.runtimeId)!;
      expect(row).toMatchObject({ status: 'settled', charged: String(expected(i)), released: String(1_000_000n - expected(i)) });
    }
    // One settlement per hold, and the wallets equal their entries.
    const [counted] = await h.ds.query(
      `SELECT count(*)::int AS n, count(DISTINCT hold_id)::int AS holds FROM ledger_transactions WHERE kind = 'settlement' AND account_id = ANY($1)`,
      [accounts],
    );
    expect(counted).toEqual({ n: runtimes.length, holds: runtimes.length });
    const ledger = h.app.get(LedgerService);
    for (const accountId of accounts) {
      expect(await ledger.reconcile(accountId)).toEqual([]);
      const spent = runtimes.reduce((sum, r, i) => (r.accountId === accountId ? sum + expected(i) : sum), 0n);
      const wallet = (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body;
      expect(wallet.total).toBe(formatMicros(1_000_000_000n - spent));
      expect(wallet.held).toBe('5.000000'); // the ten 30-minute reservations made meanwhile
    }

    // Redelivered, the same events change nothing.
    const again = await Promise.all(chunks.map((c) => ingest.ingest(c)));
    expect(again.map((s) => s.accepted)).toEqual([0, 0, 0, 0]);
    const [after] = await h.ds.query(
      `SELECT count(*)::int AS n FROM ledger_transactions WHERE kind = 'settlement' AND account_id = ANY($1)`,
      [accounts],
    );
    expect(after.n).toBe(runtimes.length);
  });

  it('splits a chunk of more settlements than one transaction carries, and settles every one of them once', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10000.000000' });
    const count = SETTLEMENTS_PER_TRANSACTION + 44;
    const ids = Array.from({ length: count }, () => uid('rt'));
    for (let i = 0; i < ids.length; i += 25) {
      const answers = await Promise.all(
        ids
          .slice(i, i + 25)
          .map((runtimeId) => h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes: 10 } })),
      );
      expect(answers.every((a) => a.status === 201)).toBe(true);
    }
    const t0 = new Date(Date.now() - 60 * minute);
    // Started and terminated in one chunk: 30 running seconds each = ceil(1,000,000 × 30,000 / 3,600,000) = 8,334 µcr.
    const events = [
      ...ids.map((id) => event(accountId, id, 'runtime.started', t0, 1)),
      ...ids.map((id) => event(accountId, id, 'runtime.terminated', new Date(t0.getTime() + 30_000), 2)),
    ];
    const result = await ingest.ingest(events);
    expect(result).toEqual({ accepted: events.length, duplicates: 0, refused: [] });
    const [row] = await h.ds.query(
      `SELECT count(*)::int AS n, sum(charged)::text AS charged FROM runtimes WHERE runtime_id = ANY($1) AND status = 'settled'`,
      [ids],
    );
    expect(row).toEqual({ n: count, charged: String(8_334n * BigInt(count)) });
    const wallet = (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body;
    expect(wallet).toMatchObject({ total: formatMicros(10_000_000_000n - 8_334n * BigInt(count)), held: '0.000000' });
    expect(await h.app.get(LedgerService).reconcile(accountId)).toEqual([]);
  });
});

function formatMicros(v: bigint): string {
  return `${v / 1_000_000n}.${String(v % 1_000_000n).padStart(6, '0')}`;
}

function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
