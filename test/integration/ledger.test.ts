import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BillingException } from '../../src/common/errors/billing.exception';
import { inTransaction } from '../../src/common/database/transaction';
import { notificationId } from '../../src/messaging/notifications';
import { uid } from '../support/app';
import { c, entrySums, startLedger, type LedgerHarness } from '../support/ledger';

const DAY = 24 * 3600_000;

describe('ledger: grants, holds, settlements', () => {
  let h: LedgerHarness;

  beforeAll(async () => {
    h = await startLedger();
  });
  afterAll(() => h.close());

  const grant = (
    accountId: string,
    credits: number,
    opts: { expiresAt?: Date | null; source?: 'plan_allowance' | 'top_up' | 'admin' | 'promotion'; key?: string; grantId?: string } = {},
  ) =>
    h.ledger.grantTx({
      accountId,
      source: opts.source ?? 'admin',
      amount: c(credits),
      expiresAt: opts.expiresAt ?? null,
      idempotencyKey: opts.key ?? uid('k'),
      reason: 'test',
      actor: 'test',
      grantId: opts.grantId,
    });
  const hold = (accountId: string, credits: number, holdId = uid('h')) =>
    h.ledger.createHoldTx({ accountId, holdId, amount: c(credits), reference: 'rt_1', idempotencyKey: `hold:${holdId}` });

  it('holds deduct at once, settle charges at most the hold and releases the rest', async () => {
    const acc = await h.account();
    await grant(acc, 10);
    const held = await hold(acc, 4, 'h_settle_1');
    expect(held.balance).toEqual({ total: c(10), held: c(4), available: c(6), debt: 0n });

    const settled = await h.ledger.settleHoldTx({ holdId: 'h_settle_1', amount: c(1.5) });
    expect(settled).toMatchObject({ status: 'settled', charged: c(1.5), released: c(2.5), firstTime: true });
    expect(settled.balance).toEqual({ total: c(8.5), held: 0n, available: c(8.5), debt: 0n });

    // A second settle (or a void) is a no-op that answers the first outcome.
    const again = await h.ledger.settleHoldTx({ holdId: 'h_settle_1', amount: c(3) });
    expect(again).toMatchObject({ status: 'settled', charged: c(1.5), released: c(2.5), firstTime: false, transactionId: null });
    const voided = await h.ledger.voidHoldTx('h_settle_1');
    expect(voided).toMatchObject({ status: 'settled', charged: c(1.5), firstTime: false });

    // More than the hold is capped at the hold.
    await hold(acc, 2, 'h_settle_2');
    const capped = await h.ledger.settleHoldTx({ holdId: 'h_settle_2', amount: c(50) });
    expect(capped).toMatchObject({ charged: c(2), released: 0n });
    expect((await h.ledger.wallet(undefined, acc)).available).toBe(c(6.5));
    expect(await h.ledger.reconcile(acc)).toEqual([]);
  });

  it('refuses a hold that would overdraw, counting open holds, with available and required', async () => {
    const acc = await h.account();
    await grant(acc, 5);
    await hold(acc, 3);
    const refused = await hold(acc, 2.5).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BillingException);
    expect((refused as BillingException).toBody()).toEqual({
      error: { code: 'DL_BILLING_INSUFFICIENT_CREDITS', message: expect.any(String), available: '2.000000', required: '2.500000' },
    });
    expect((refused as BillingException).status).toBe(402);
    expect((await h.ledger.wallet(undefined, acc)).available).toBe(c(2));
  });

  it('burns earliest expiry first, then priority, then oldest', async () => {
    const acc = await h.account();
    const now = h.clock.now().getTime();
    await grant(acc, 3, { source: 'top_up', grantId: uid('g_topup') }); // never expires
    const soon = await grant(acc, 2, { source: 'plan_allowance', expiresAt: new Date(now + 5 * DAY) });
    const later = await grant(acc, 2, { source: 'promotion', expiresAt: new Date(now + 9 * DAY) });
    const held = await hold(acc, 5, 'h_burn');
    expect(held.balance.available).toBe(c(2));
    const rows: { grant_id: string; held: string }[] = await h.ds.query(
      `SELECT grant_id, held::text AS held FROM hold_allocations WHERE hold_id = 'h_burn' ORDER BY grant_id`,
    );
    const byGrant = Object.fromEntries(rows.map((r) => [r.grant_id, BigInt(r.held)]));
    expect(byGrant[soon.grant.id]).toBe(c(2));
    expect(byGrant[later.grant.id]).toBe(c(2));
    expect(Object.values(byGrant).reduce((a, b) => a + b, 0n)).toBe(c(5));
    // Settling 1 charges the earliest-expiring allocation; the rest goes back to its grants.
    await h.ledger.settleHoldTx({ holdId: 'h_burn', amount: c(1) });
    const wallet = await h.ledger.wallet(undefined, acc);
    expect(wallet.grants.map((g) => [g.id, g.remaining])).toEqual([
      [soon.grant.id, c(1)],
      [later.grant.id, c(2)],
      [expect.stringMatching(/^g_topup/), c(3)],
    ]);
  });

  it('expires a held part at once when its grant expired meanwhile; grant expiry takes only the unheld rest', async () => {
    const acc = await h.account();
    const t0 = h.clock.now();
    const allowance = await grant(acc, 10, { source: 'plan_allowance', expiresAt: new Date(t0.getTime() + DAY) });
    await hold(acc, 4, 'h_across');
    h.clock.advance(DAY + 1000);
    try {
      const swept = await h.ledger.expireGrants(h.clock.now());
      expect(swept.amount).toBeGreaterThanOrEqual(c(6));
      let wallet = await h.ledger.wallet(undefined, acc);
      expect(wallet).toMatchObject({ available: 0n, held: c(4), total: c(4) });
      const settled = await h.ledger.settleHoldTx({ holdId: 'h_across', amount: c(1) });
      expect(settled).toMatchObject({ charged: c(1), released: c(3) });
      wallet = await h.ledger.wallet(undefined, acc);
      expect(wallet).toMatchObject({ available: 0n, held: 0n, total: 0n });
      const sums = await entrySums(h.ds, acc);
      expect(sums).toMatchObject({ consumption: c(1), expired: c(9), issued: -c(10) });
      expect(sums[`grant:${allowance.grant.id}`] ?? 0n).toBe(0n);
      expect(await h.ledger.reconcile(acc)).toEqual([]);

      // A correction that lowers the charge gives back credits of the expired grant: expired at once too
      // (this time in the caller's transaction); its replay expires and announces nothing more.
      for (let i = 0; i < 2; i++) {
        await inTransaction(h.ds, (em) =>
          h.ledger.adjustSettledHold(em, { holdId: 'h_across', newCharge: c(0.25), idempotencyKey: 'adj:across' }),
        );
      }
      expect(await entrySums(h.ds, acc)).toMatchObject({ consumption: c(0.25), expired: c(9.75), issued: -c(10) });
      // Every credit that expired is announced once: the unheld 6 at the grant's expiry, then each part as it came back.
      const expiredAt = allowance.grant.expiresAt!.toISOString();
      const notices = await h.ds.query(`SELECT payload FROM outbox WHERE key = $1 AND payload->>'type' = 'credits.expired' ORDER BY id`, [
        acc,
      ]);
      const data = { grantId: allowance.grant.id, source: 'plan_allowance', expiredAt };
      expect(notices.map((n: { payload: { data: unknown } }) => n.payload.data)).toEqual([
        { ...data, credits: '6.000000' },
        { ...data, credits: '3.000000' },
        { ...data, credits: '0.750000' },
      ]);
      expect(notices.map((n: { payload: { id: string } }) => n.payload.id)).toEqual([
        notificationId(`credits.expired:${allowance.grant.id}`),
        notificationId(`credits.expired:${allowance.grant.id}:settle:h_across`),
        notificationId(`credits.expired:${allowance.grant.id}:adj:across`),
      ]);
    } finally {
      h.clock.set(t0);
    }
  });

  it('expires at once what a settlement dated before its grant expiry gives back, when it is written after the expiry job ran', async () => {
    // Metering dates a charge at the runtime's end: a chunk ending just before midnight can be written
    // just after the expiry job expired the allowance its hold was taken from.
    const acc = await h.account();
    const t0 = h.clock.now();
    const expiresAt = new Date(t0.getTime() + DAY);
    const allowance = await grant(acc, 10, { source: 'plan_allowance', expiresAt });
    await hold(acc, 4, 'h_dated_before');
    await hold(acc, 4, 'h_dated_before_adj');
    h.clock.advance(DAY + 1000);
    try {
      await h.ledger.expireGrants(h.clock.now());
      const before = new Date(expiresAt.getTime() - 1);
      const settled = await inTransaction(h.ds, (em) => h.ledger.settleHold(em, { holdId: 'h_dated_before', amount: c(1) }, before));
      expect(settled).toMatchObject({ charged: c(1), released: c(3) });
      await inTransaction(h.ds, (em) => h.ledger.settleHold(em, { holdId: 'h_dated_before_adj', amount: c(4) }, before));
      await inTransaction(h.ds, (em) =>
        h.ledger.adjustSettledHold(em, { holdId: 'h_dated_before_adj', newCharge: c(0.5), idempotencyKey: 'adj:dated-before' }, before),
      );
      expect(await h.ledger.wallet(undefined, acc)).toMatchObject({ available: 0n, held: 0n, total: 0n });
      const sums = await entrySums(h.ds, acc);
      expect(sums).toMatchObject({ consumption: c(1.5), expired: c(8.5), issued: -c(10) });
      expect(sums[`grant:${allowance.grant.id}`] ?? 0n).toBe(0n);
      expect(await h.ledger.reconcile(acc)).toEqual([]);
    } finally {
      h.clock.set(t0);
    }
  });

  it('corrects a settled charge: more is taken in burn order, a shortfall becomes debt, the next grant repays it', async () => {
    const acc = await h.account();
    await grant(acc, 5);
    await hold(acc, 4, 'h_adj');
    await h.ledger.settleHoldTx({ holdId: 'h_adj', amount: c(2) });
    // A late event: the charge is really 4; the 2 more come from the wallet's grants.
    const up = await h.ledger.adjustSettledHoldTx({ holdId: 'h_adj', newCharge: c(4), idempotencyKey: 'adj:1' });
    expect(up).toMatchObject({ previousCharge: c(2), charged: c(4), delta: c(2), debt: 0n, replayed: false });
    expect(up.balance).toMatchObject({ available: c(1), debt: 0n });
    const replay = await h.ledger.adjustSettledHoldTx({ holdId: 'h_adj', newCharge: c(4), idempotencyKey: 'adj:1' });
    expect(replay).toMatchObject({ previousCharge: c(2), charged: c(4), replayed: true, transactionId: up.transactionId });
    await expect(h.ledger.adjustSettledHoldTx({ holdId: 'h_adj', newCharge: c(3), idempotencyKey: 'adj:1' })).rejects.toMatchObject({
      code: 'DL_BILLING_IDEMPOTENCY_CONFLICT',
    });
    const same = await h.ledger.adjustSettledHoldTx({ holdId: 'h_adj', newCharge: c(9), idempotencyKey: 'adj:2' });
    expect(same).toMatchObject({ charged: c(4), delta: 0n, transactionId: null }); // capped at the hold: no change
    expect((await h.ledger.wallet(undefined, acc)).available).toBe(c(1));

    const acc2 = await h.account();
    await grant(acc2, 2);
    await hold(acc2, 2, 'h_debt');
    await h.ledger.settleHoldTx({ holdId: 'h_debt', amount: c(0.5) });
    await hold(acc2, 1.5, 'h_debt_other');
    const owed = await h.ledger.adjustSettledHoldTx({ holdId: 'h_debt', newCharge: c(2), idempotencyKey: 'adj:owed' });
    expect(owed).toMatchObject({ delta: c(1.5), debt: c(1.5) });
    expect(owed.balance).toEqual({ total: 0n, held: c(1.5), available: 0n, debt: c(1.5) });
    const repaid = await grant(acc2, 1);
    expect(repaid.grant.remaining).toBe(0n);
    expect(repaid.balance).toMatchObject({ available: 0n, debt: c(0.5) });
    // Refunding the corrected charge cancels the remaining debt first, then gives back to the grant that repaid it.
    const refund = await h.ledger.adjustSettledHoldTx({ holdId: 'h_debt', newCharge: c(0.5), idempotencyKey: 'adj:refund' });
    expect(refund).toMatchObject({ delta: -c(1.5), debt: 0n });
    expect(refund.balance).toMatchObject({ available: c(1), debt: 0n });
    expect(await h.ledger.reconcile(acc2)).toEqual([]);
    expect(await h.ledger.reconcile(acc)).toEqual([]);
  });

  it('answers a replayed key with the first result and refuses the key for a different request', async () => {
    const acc = await h.account();
    const first = await grant(acc, 7, { key: 'grant-key-1' });
    const replay = await grant(acc, 7, { key: 'grant-key-1' });
    expect(replay).toMatchObject({ replayed: true, transactionId: first.transactionId });
    expect(replay.grant.id).toBe(first.grant.id);
    const conflict = await grant(acc, 8, { key: 'grant-key-1' }).catch((e: unknown) => e);
    expect((conflict as BillingException).code).toBe('DL_BILLING_IDEMPOTENCY_CONFLICT');
    expect((await h.ledger.wallet(undefined, acc)).total).toBe(c(7));

    const held = await h.ledger.createHoldTx({ accountId: acc, holdId: 'h_idem', amount: c(1), reference: null, idempotencyKey: 'hk' });
    const again = await h.ledger.createHoldTx({ accountId: acc, holdId: 'h_idem', amount: c(1), reference: null, idempotencyKey: 'hk' });
    expect(again).toMatchObject({ replayed: true, transactionId: held.transactionId });
    const other = await h.ledger
      .createHoldTx({ accountId: acc, holdId: 'h_idem', amount: c(2), reference: null, idempotencyKey: 'hk' })
      .catch((e: unknown) => e);
    expect((other as BillingException).code).toBe('DL_BILLING_IDEMPOTENCY_CONFLICT');
    expect((await h.ledger.wallet(undefined, acc)).held).toBe(c(1));
  });

  it('extends a hold and refuses an extension that would overdraw', async () => {
    const acc = await h.account();
    await grant(acc, 3);
    await hold(acc, 1, 'h_ext');
    const ext = await h.ledger.increaseHoldTx({ holdId: 'h_ext', amount: c(1.5), idempotencyKey: 'ext:1' });
    expect(ext.hold.amount).toBe(c(2.5));
    expect(ext.balance).toMatchObject({ held: c(2.5), available: c(0.5) });
    const refused = await h.ledger.increaseHoldTx({ holdId: 'h_ext', amount: c(1), idempotencyKey: 'ext:2' }).catch((e: unknown) => e);
    expect((refused as BillingException).code).toBe('DL_BILLING_INSUFFICIENT_CREDITS');
    const settled = await h.ledger.settleHoldTx({ holdId: 'h_ext', amount: c(10) });
    expect(settled.charged).toBe(c(2.5));
  });

  it('keeps entries append-only and balanced in the database itself', async () => {
    const acc = await h.account();
    await grant(acc, 1);
    await expect(h.ds.query(`UPDATE ledger_entries SET amount = amount + 1`)).rejects.toThrow(/append-only/);
    await expect(h.ds.query(`DELETE FROM ledger_transactions`)).rejects.toThrow(/append-only/);
    await expect(
      h.ds.query(
        `WITH t AS (INSERT INTO ledger_transactions (account_id, kind, idempotency_key, fingerprint, amount, total_after, held_after,
           available_after, explanation, created_at) VALUES ($1, 'grant', 'bad', 'x', 1, 0, 0, 0, '{}', now()) RETURNING id)
         INSERT INTO ledger_entries (transaction_id, line, ledger_account, amount) SELECT id, 1, 'issued', 5 FROM t`,
        [acc],
      ),
    ).rejects.toThrow(/unbalanced/);
    // Checked per transaction, for a statement writing many (as the monthly reset does): one bad one refuses all.
    const many = (second: number, em: { query(sql: string, params: unknown[]): Promise<unknown> } = h.ds) =>
      em.query(
        `WITH t AS (INSERT INTO ledger_transactions (account_id, kind, idempotency_key, fingerprint, amount, total_after, held_after,
           available_after, explanation, created_at) SELECT $1, 'grant', 'many:' || $2 || ':' || i, 'x', 1, 0, 0, 0, '{}', now()
           FROM generate_series(1, 2) AS i RETURNING id, idempotency_key)
         INSERT INTO ledger_entries (transaction_id, line, ledger_account, amount)
         SELECT id, 1, 'issued', -3 FROM t UNION ALL
         SELECT id, 2, 'expired', CASE WHEN idempotency_key LIKE '%:2' THEN $2::bigint ELSE 3 END FROM t`,
        [acc, second],
      );
    await expect(many(4)).rejects.toThrow(/unbalanced/);
    // Balanced, the same statement passes (rolled back after: the wallet's stored balances do not know these rows).
    await expect(
      h.ds.transaction(async (em) => {
        await many(3, em);
        throw new Error('passed, rolled back');
      }),
    ).rejects.toThrow(/passed, rolled back/);
    // Entries must belong to a transaction that exists.
    await expect(
      h.ds.query(
        `INSERT INTO ledger_entries (transaction_id, line, ledger_account, amount) VALUES (-1, 1, 'issued', -1), (-1, 2, 'expired', 1)`,
      ),
    ).rejects.toThrow(/does not exist/);
    expect(await h.ledger.reconcile()).toEqual([]);
  });

  it('404s unknown accounts and holds', async () => {
    await expect(h.ledger.wallet(undefined, 'nobody_here')).rejects.toMatchObject({ code: 'DL_BILLING_NOT_FOUND' });
    await expect(h.ledger.settleHoldTx({ holdId: 'no_such_hold', amount: 1n })).rejects.toMatchObject({ code: 'DL_BILLING_NOT_FOUND' });
    await expect(grant('nobody_here', 1)).rejects.toMatchObject({ code: 'DL_BILLING_NOT_FOUND' });
  });
});
