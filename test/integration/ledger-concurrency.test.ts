import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BillingException } from '../../src/common/errors/billing.exception';
import { uid } from '../support/app';
import type { Call } from '../../src/common/database/pipelined-transaction';
import { preparedRows } from '../../src/common/database/prepared';
import { writeCall } from '../../src/ledger/persistence/batch-write';
import type { TransactionWrite } from '../../src/ledger/persistence/wallet-store';
import { c, startLedger, type LedgerHarness } from '../support/ledger';

describe('ledger under concurrency', () => {
  let h: LedgerHarness;

  beforeAll(async () => {
    h = await startLedger();
  });
  afterAll(() => h.close());

  it('200 concurrent holds on a wallet that can afford exactly k of them: exactly k succeed, nothing overdraws', async () => {
    const acc = await h.account();
    const k = 37;
    // Three grants (different burn order), together enough for 37 holds of 1.5 and 1.4 left over.
    await h.ledger.grantTx({
      accountId: acc,
      source: 'plan_allowance',
      amount: c(20),
      expiresAt: new Date(h.clock.now().getTime() + 86_400_000),
      idempotencyKey: 'g1',
      reason: 'x',
      actor: 'test',
    });
    await h.ledger.grantTx({
      accountId: acc,
      source: 'promotion',
      amount: c(15),
      expiresAt: null,
      idempotencyKey: 'g2',
      reason: 'x',
      actor: 'test',
    });
    await h.ledger.grantTx({
      accountId: acc,
      source: 'top_up',
      amount: c(20.9),
      expiresAt: null,
      idempotencyKey: 'g3',
      reason: 'x',
      actor: 'test',
    });

    const attempts = Array.from({ length: 200 }, (_, i) => {
      const holdId = uid(`cc${i}`);
      const input = { accountId: acc, holdId, amount: c(1.5), reference: `rt_${i}`, idempotencyKey: holdId };
      // Half through the caller-transaction API, half through the own-transaction path.
      return (i % 2 ? h.ledger.transact((em) => h.ledger.createHold(em, input)) : h.ledger.createHoldTx(input)).then(
        (r) => ({ ok: true as const, holdId: r.hold.id }),
        (e: unknown) => ({ ok: false as const, code: e instanceof BillingException ? e.code : String(e) }),
      );
    });
    const before = { ...h.ledger.stats };
    const results = await Promise.all(attempts);
    // The own-transaction half was group-committed (several holds per database transaction), and no batch had to be rerun.
    expect(h.ledger.stats.batchedOperations - before.batchedOperations).toBeGreaterThan(h.ledger.stats.batches - before.batches);
    expect(h.ledger.stats.batchFallbacks).toBe(before.batchFallbacks);
    const succeeded = results.filter((r) => r.ok);
    expect(succeeded).toHaveLength(k);
    expect(new Set(results.filter((r) => !r.ok).map((r) => (r as { code: string }).code))).toEqual(
      new Set(['DL_BILLING_INSUFFICIENT_CREDITS']),
    );

    const wallet = await h.ledger.wallet(undefined, acc);
    expect(wallet).toMatchObject({ total: c(55.9), held: c(55.5), available: c(0.4), debt: 0n });
    const [grants] = await h.ds.query(
      `SELECT min(remaining)::text AS low, sum(remaining)::text AS total FROM grants WHERE account_id = $1`,
      [acc],
    );
    expect(BigInt(grants.low) >= 0n).toBe(true);
    expect(BigInt(grants.total)).toBe(c(0.4));
    expect(await h.ledger.reconcile(acc)).toEqual([]);

    // Settle them all at once: each charges 1, releases 0.5.
    const settled = await Promise.all(
      succeeded.map((r, i) =>
        i % 2
          ? h.ledger.settleHoldTx({ holdId: r.holdId!, amount: c(1) })
          : h.ledger.transact((em) => h.ledger.settleHold(em, { holdId: r.holdId!, amount: c(1) })),
      ),
    );
    expect(settled.every((s) => s.firstTime && s.charged === c(1) && s.released === c(0.5))).toBe(true);
    expect(await h.ledger.wallet(undefined, acc)).toMatchObject({ total: c(55.9 - 37), held: 0n, available: c(55.9 - 37) });
    expect(await h.ledger.reconcile(acc)).toEqual([]);
  });

  it('settles, voids and re-settles the same hold concurrently: it resolves exactly once', async () => {
    const acc = await h.account();
    await h.ledger.grantTx({
      accountId: acc,
      source: 'admin',
      amount: c(10),
      expiresAt: null,
      idempotencyKey: 'g',
      reason: 'x',
      actor: 'test',
    });
    await h.ledger.createHoldTx({ accountId: acc, holdId: `race_${acc}`, amount: c(4), reference: null, idempotencyKey: 'h' });
    const outcomes = await Promise.all([
      h.ledger.settleHoldTx({ holdId: `race_${acc}`, amount: c(3) }),
      h.ledger.voidHoldTx(`race_${acc}`),
      h.ledger.settleHoldTx({ holdId: `race_${acc}`, amount: c(1) }),
      h.ledger.transact((em) => h.ledger.expireHold(em, `race_${acc}`)),
      h.ledger.transact((em) => h.ledger.settleHold(em, { holdId: `race_${acc}`, amount: c(2) })),
    ]);
    expect(outcomes.filter((o) => o.firstTime)).toHaveLength(1);
    const first = outcomes.find((o) => o.firstTime)!;
    for (const o of outcomes) {
      expect({ status: o.status, charged: o.charged, released: o.released }).toEqual({
        status: first.status,
        charged: first.charged,
        released: first.released,
      });
    }
    expect((await h.ledger.wallet(undefined, acc)).total).toBe(c(10) - first.charged);
    const [resolutions] = await h.ds.query(
      `SELECT count(*)::int AS n FROM ledger_transactions WHERE hold_id = $1 AND kind <> 'reservation'`,
      [`race_${acc}`],
    );
    expect(resolutions.n).toBe(1);
  });

  it('grants and expiry running alongside holds keep every balance equal to its entries', async () => {
    const accounts = await Promise.all(Array.from({ length: 5 }, () => h.account()));
    const t0 = h.clock.now();
    await Promise.all(
      accounts.map((acc, i) =>
        h.ledger.grantTx({
          accountId: acc,
          source: 'plan_allowance',
          amount: c(10),
          expiresAt: new Date(t0.getTime() + 1000),
          idempotencyKey: `a${i}`,
          reason: 'x',
          actor: 'test',
        }),
      ),
    );
    await Promise.all(
      accounts.map((acc, i) =>
        h.ledger.grantTx({
          accountId: acc,
          source: 'top_up',
          amount: c(5),
          expiresAt: null,
          idempotencyKey: `b${i}`,
          reason: 'x',
          actor: 'test',
        }),
      ),
    );
    const holds = accounts.flatMap((acc) => Array.from({ length: 4 }, () => ({ acc, holdId: uid('x') })));
    await Promise.all(
      holds.map(({ acc, holdId }) =>
        h.ledger.createHoldTx({ accountId: acc, holdId, amount: c(2), reference: null, idempotencyKey: holdId }),
      ),
    );
    h.clock.advance(2000);
    try {
      await Promise.all([
        h.ledger.expireGrants(h.clock.now(), 2),
        ...holds.map(({ holdId }, i) => h.ledger.settleHoldTx({ holdId, amount: c(i % 3) })),
        ...accounts.map((acc, i) =>
          h.ledger.grantTx({
            accountId: acc,
            source: 'admin',
            amount: c(1),
            expiresAt: null,
            idempotencyKey: `c${i}`,
            reason: 'x',
            actor: 'test',
          }),
        ),
      ]);
      await h.ledger.expireGrants(h.clock.now());
      for (const acc of accounts) {
        expect(await h.ledger.reconcile(acc)).toEqual([]);
        const w = await h.ledger.wallet(undefined, acc);
        expect(w.held).toBe(0n);
        expect(w.available >= 0n).toBe(true);
      }
    } finally {
      h.clock.set(t0);
    }
  });

  it('group-commits a grant and a hold that draws on it in one batch: the grant is written with what is left of it', async () => {
    const acc = await h.account();
    const later = new Date(h.clock.now().getTime() + 86_400_000);
    const before = { ...h.ledger.stats };
    // The first grant starts a batch of its own; what arrives meanwhile (for the same wallet, so the same lane) is the next batch.
    const first = h.ledger.grantTx({
      accountId: acc,
      source: 'top_up',
      amount: c(5),
      expiresAt: null,
      idempotencyKey: 'first',
      reason: 'x',
      actor: 'test',
    });
    const second = h.ledger.grantTx({
      accountId: acc,
      source: 'promotion',
      amount: c(3),
      expiresAt: later,
      idempotencyKey: 'second',
      reason: 'x',
      actor: 'test',
    });
    // Burn order: the expiring grant (created in this very batch) first, then the top-up.
    const hold = h.ledger.createHoldTx({ accountId: acc, holdId: uid('fold'), amount: c(4), reference: null, idempotencyKey: 'hold' });
    const [, granted, held] = await Promise.all([first, second, hold]);
    expect(h.ledger.stats.batches - before.batches).toBe(2);
    expect(h.ledger.stats.batchedOperations - before.batchedOperations).toBe(3);
    expect(h.ledger.stats.batchFallbacks).toBe(before.batchFallbacks);
    const grants: { id: string; remaining: string }[] = await h.ds.query(
      `SELECT id, remaining::text AS remaining FROM grants WHERE account_id = $1 ORDER BY created_at, id`,
      [acc],
    );
    expect(Object.fromEntries(grants.map((g) => [g.id, BigInt(g.remaining)]))).toEqual({
      [granted.grant.id]: 0n,
      [grants.find((g) => g.id !== granted.grant.id)!.id]: c(4),
    });
    expect(held.hold.amount).toBe(c(4));
    expect(await h.ledger.wallet(undefined, acc)).toMatchObject({ total: c(8), held: c(4), available: c(4) });
    expect(await h.ledger.reconcile(acc)).toEqual([]);
    // Each operation has its own transaction row, in the order they were decided.
    const kinds: { kind: string }[] = await h.ds.query(`SELECT kind FROM ledger_transactions WHERE account_id = $1 ORDER BY id`, [acc]);
    expect(kinds.map((k) => k.kind)).toEqual(['top-up', 'grant', 'reservation']);
  });

  it('refuses a batch write decided on a wallet version that is no longer current, and writes nothing of it', async () => {
    const acc = await h.account();
    await h.ledger.grantTx({
      accountId: acc,
      source: 'admin',
      amount: c(10),
      expiresAt: null,
      idempotencyKey: 'g',
      reason: 'x',
      actor: 'test',
    });
    const [{ version }] = await h.ds.query(`SELECT version::text AS version FROM wallets WHERE account_id = $1`, [acc]);
    const write = (key: string, expectedVersion: bigint): TransactionWrite => {
      const grantId = uid('g');
      return {
        accountId: acc,
        kind: 'grant',
        idempotencyKey: key,
        fingerprint: 'f',
        amount: c(1),
        holdId: null,
        grantId: null,
        reference: null,
        after: { total: c(11), held: 0n, available: c(11) },
        explanation: {},
        at: h.clock.now(),
        entries: [
          { account: 'issued', amount: -c(1) },
          { account: `grant:${grantId}`, amount: c(1) },
        ],
        expectedVersion,
        newGrant: {
          id: grantId,
          source: 'admin',
          amount: c(1),
          remaining: c(1),
          priority: 0,
          expiresAt: null,
          reason: 'x',
          reference: null,
        },
      };
    };
    // Two writes decided one after the other on the current version: accepted (then rolled back).
    const run = (calls: Call[]) =>
      h.ds
        .transaction(async (em) => {
          const call = calls[0]!;
          const found = await preparedRows(em, call.statement.name, call.statement.text, call.values);
          throw Object.assign(new Error('roll back'), { found });
        })
        .catch((e: Error & { found?: unknown[] }) => e);
    const ok = await run([writeCall([write('a', BigInt(version)), write('b', BigInt(version) + 1n)])]);
    expect(ok.message).toBe('roll back');
    expect(ok.found).toHaveLength(2);
    // The same, decided on an older version: refused by the statement.
    const stale = await run([writeCall([write('a', BigInt(version) - 1n), write('b', BigInt(version))])]);
    expect(stale.message).toMatch(/not at the version read under its lock/);
    // Not consecutive: refused before anything is sent.
    expect(() => writeCall([write('a', BigInt(version)), write('b', BigInt(version))])).toThrow(/decided on version/);
    const [after] = await h.ds.query(`SELECT version::text AS version, grants_balance::text AS g FROM wallets WHERE account_id = $1`, [
      acc,
    ]);
    expect(after).toEqual({ version, g: String(c(10)) });
    expect(await h.ds.query(`SELECT 1 FROM ledger_transactions WHERE account_id = $1 AND idempotency_key IN ('a', 'b')`, [acc])).toEqual(
      [],
    );
  });

  it('runs a batch that fails in the database again one operation at a time: only the failing one fails', async () => {
    const acc = await h.account();
    const poison = uid('poison');
    // A database-side failure of one operation (a trigger refuses its transaction row).
    await h.ds.query(`CREATE FUNCTION test_refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.idempotency_key = '${poison}' THEN RAISE EXCEPTION 'poisoned write'; END IF; RETURN NEW; END $$`);
    await h.ds.query(
      `CREATE TRIGGER test_refuse_poison BEFORE INSERT ON ledger_transactions FOR EACH ROW EXECUTE FUNCTION test_refuse_poison()`,
    );
    try {
      const before = { ...h.ledger.stats };
      const first = h.ledger.grantTx({
        accountId: acc,
        source: 'admin',
        amount: c(10),
        expiresAt: null,
        idempotencyKey: 'g',
        reason: 'x',
        actor: 'test',
      });
      const holds = ['ok1', poison, 'ok2'].map((key) =>
        h.ledger.createHoldTx({ accountId: acc, holdId: uid(key), amount: c(2), reference: null, idempotencyKey: key }).then(
          (r) => r.hold.amount,
          (e: Error) => e.message,
        ),
      );
      await first;
      expect(await Promise.all(holds)).toEqual([c(2), 'poisoned write', c(2)]);
      expect(h.ledger.stats.batchFallbacks - before.batchFallbacks).toBe(1);
      expect(await h.ledger.wallet(undefined, acc)).toMatchObject({ total: c(10), held: c(4), available: c(6) });
      const keys: { idempotency_key: string }[] = await h.ds.query(
        `SELECT idempotency_key FROM ledger_transactions WHERE account_id = $1 ORDER BY id`,
        [acc],
      );
      expect(keys.map((k) => k.idempotency_key)).toEqual(['g', 'ok1', 'ok2']);
      expect(await h.ledger.reconcile(acc)).toEqual([]);
    } finally {
      await h.ds.query(`DROP TRIGGER test_refuse_poison ON ledger_transactions; DROP FUNCTION test_refuse_poison()`);
    }
  });

  it("refuses a hold under another account's hold id on every path, and never spends that account's grants", async () => {
    const [owner, other] = [await h.account(), await h.account()];
    const soon = new Date(h.clock.now().getTime() + 3600_000);
    await h.ledger.grantTx({
      accountId: owner,
      source: 'admin',
      amount: c(10),
      expiresAt: soon,
      idempotencyKey: 'g',
      reason: 'x',
      actor: 'test',
    });
    await h.ledger.grantTx({
      accountId: other,
      source: 'admin',
      amount: c(5),
      expiresAt: null,
      idempotencyKey: 'g',
      reason: 'x',
      actor: 'test',
    });
    const holdId = uid('owned');
    await h.ledger.createHoldTx({ accountId: owner, holdId, amount: c(1), reference: 'rt', idempotencyKey: holdId });
    // The hold under the owner's id, alone and among the other account's own holds (one batch): refused,
    // and the owner's grant (first in any burn order: it expires first) never lent to the others.
    const bad = { accountId: other, holdId, amount: c(1), reference: 'rt', idempotencyKey: uid('k') };
    const alone = await h.ledger
      .transact((em) => h.ledger.createHold(em, bad))
      .then(
        () => 'held',
        () => 'refused',
      );
    expect(alone).toBe('refused');
    const batch = await Promise.allSettled(
      Array.from({ length: 9 }, (_, i) =>
        h.ledger.createHoldTx(
          i === 4
            ? { ...bad, idempotencyKey: uid('k') }
            : { accountId: other, holdId: uid('own'), amount: c(0.5), reference: 'rt', idempotencyKey: uid('k') },
        ),
      ),
    );
    expect(batch.map((a) => a.status)).toEqual([...Array(4).fill('fulfilled'), 'rejected', ...Array(4).fill('fulfilled')]);
    expect(await h.ledger.wallet(undefined, owner)).toMatchObject({ total: c(10), held: c(1) });
    expect(await h.ledger.wallet(undefined, other)).toMatchObject({ total: c(5), held: c(4) });
    expect(await h.ledger.reconcile(owner)).toEqual([]);
    expect(await h.ledger.reconcile(other)).toEqual([]);
  });
});
