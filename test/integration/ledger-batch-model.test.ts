import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BillingException } from '../../src/common/errors/billing.exception';
import { adjustOperation } from '../../src/ledger/operations/adjust-hold';
import type { Operation } from '../../src/ledger/operations/operation';
import { resolveOperation } from '../../src/ledger/operations/resolve-hold';
import type { GrantSource } from '../../src/ledger/core/types';
import { uid } from '../support/app';
import { startLedger, type LedgerHarness } from '../support/ledger';

/**
 * Property test of the ledger's batch in the caller's transaction (LedgerService.runBatch, what
 * metering settles a chunk with): the same settlements and corrections, on two wallets in the same
 * state, decided together in one batch on one and one at a time on the other, give the same answers
 * and leave the same wallets, grants and holds; a refusal of any of them writes nothing of the batch.
 */

const UNIT = 100_000n; // 0.1 credit
const HOUR = 3_600_000;

type Op = { t: 'settle'; hold: number; units: number } | { t: 'adjust'; hold: number; units: number };

type GrantSpec = { units: number; expiresInH: number | null; source: GrantSource };

const grantArb: fc.Arbitrary<GrantSpec> = fc.record({
  units: fc.integer({ min: 1, max: 30 }),
  expiresInH: fc.option(fc.integer({ min: 1, max: 3 }), { nil: null }),
  source: fc.constantFrom<GrantSource>('plan_allowance', 'top_up', 'promotion'),
});
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ t: fc.constant('settle' as const), hold: fc.nat({ max: 7 }), units: fc.integer({ min: 0, max: 25 }) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant('adjust' as const), hold: fc.nat({ max: 7 }), units: fc.integer({ min: 0, max: 40 }) }),
  },
);

describe('the ledger batch in the caller transaction against one operation at a time (fast-check)', () => {
  let h: LedgerHarness;

  beforeAll(async () => {
    h = await startLedger('2026-12-02T09:00:00.000Z');
  });
  afterAll(() => h.close());

  /** An account with the given grants and holds (units of 0.1 credit; holds that cannot be afforded are left out), some already settled. */
  const setUp = async (grants: GrantSpec[], holds: number[], settledFirst: number[]): Promise<string> => {
    const acc = await h.account(uid('bm'));
    for (const [i, g] of grants.entries()) {
      await h.ledger.grantTx({
        accountId: acc,
        source: g.source,
        amount: BigInt(g.units) * UNIT,
        expiresAt: g.expiresInH === null ? null : new Date(h.clock.now().getTime() + g.expiresInH * HOUR),
        grantId: `${acc}_g${i}`,
        idempotencyKey: `g${i}`,
        reason: 'model',
        actor: 'test',
      });
    }
    for (const [i, units] of holds.entries()) {
      const input = { accountId: acc, holdId: `${acc}_h${i}`, amount: BigInt(units) * UNIT, reference: 'rt', idempotencyKey: `h${i}` };
      await h.ledger.createHoldTx(input).catch((e: unknown) => {
        if (!(e instanceof BillingException)) throw e;
      });
    }
    for (const i of settledFirst) {
      await h.ledger.settleHoldTx({ holdId: `${acc}_h${i % holds.length}`, amount: BigInt(i) * UNIT }).catch((e: unknown) => {
        if (!(e instanceof BillingException)) throw e;
      });
    }
    return acc;
  };

  const opOf = (acc: string, op: Op, n: number): Operation<unknown> =>
    op.t === 'settle'
      ? resolveOperation(`${acc}_h${op.hold}`, 'settle', BigInt(op.units) * UNIT, { reason: 'batch' })
      : adjustOperation({ holdId: `${acc}_h${op.hold}`, newCharge: BigInt(op.units) * UNIT, idempotencyKey: `adj${n}`, reason: 'batch' });

  /** What the answers, balances, grants and holds of an account say, with the account's id taken out of every id. */
  const stateOf = async (acc: string, answers: unknown[]) => {
    const strip = (v: unknown): unknown =>
      JSON.parse(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? String(x) : x)).replaceAll(acc, 'ACC'));
    const wallet = await h.ledger.wallet(undefined, acc);
    const grants = await h.ds.query(`SELECT id, remaining::text, status FROM grants WHERE account_id = $1 ORDER BY id`, [acc]);
    const holds = await h.ds.query(
      `SELECT id, status, amount::text, settled_amount::text, released_amount::text, charged_amount::text, debt_amount::text
       FROM holds WHERE account_id = $1 ORDER BY id`,
      [acc],
    );
    const allocations = await h.ds.query(
      `SELECT a.hold_id, a.grant_id, a.held::text, a.charged::text, a.released::text FROM hold_allocations a
       JOIN holds h ON h.id = a.hold_id WHERE h.account_id = $1 ORDER BY a.hold_id, a.grant_id`,
      [acc],
    );
    const answered = answers.map((a) => {
      const { transactionId: _, ...rest } = a as { transactionId?: unknown };
      return rest;
    });
    return strip({ wallet, grants, holds, allocations, answered });
  };

  it('decides a batch of settlements and corrections as one at a time would, and writes nothing of a refused batch', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(grantArb, { minLength: 1, maxLength: 4 }),
        fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 3 }),
        fc.array(opArb, { minLength: 1, maxLength: 10 }),
        async (grants, holds, settledFirst, ops) => {
          const batched = await setUp(grants, holds, settledFirst);
          const single = await setUp(grants, holds, settledFirst);
          const before = await stateOf(batched, []);
          const outcome = async (work: () => Promise<unknown[]>) =>
            work().then(
              (answers) => ({ answers, code: null as string | null }),
              (e: unknown) => {
                if (!(e instanceof BillingException)) throw e;
                return { answers: [] as unknown[], code: e.code };
              },
            );
          const one = await outcome(() =>
            h.ledger.transact(async (em) => {
              const answers: unknown[] = [];
              for (const [n, op] of ops.entries()) {
                const o = opOf(single, op, n);
                answers.push(
                  op.t === 'settle'
                    ? await h.ledger.settleHold(em, { holdId: o.lock.holdId!, amount: BigInt(op.units) * UNIT, reason: 'batch' })
                    : await h.ledger.adjustSettledHold(em, {
                        holdId: o.lock.holdId!,
                        newCharge: BigInt(op.units) * UNIT,
                        idempotencyKey: `adj${n}`,
                        reason: 'batch',
                      }),
                );
              }
              return answers;
            }),
          );
          const all = await outcome(() =>
            h.ledger.transact((em) =>
              h.ledger.runBatch(
                em,
                ops.map((op, n) => ({ accountId: batched, op: opOf(batched, op, n) })),
              ),
            ),
          );
          expect(all.code).toBe(one.code);
          expect(await stateOf(batched, all.answers)).toEqual(await stateOf(single, one.answers));
          if (all.code) expect(await stateOf(batched, [])).toEqual(before);
          expect(await h.ledger.reconcile(batched)).toEqual([]);
        },
      ),
      { numRuns: 25 },
    );
  });
});
