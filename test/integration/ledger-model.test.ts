import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BillingException } from '../../src/common/errors/billing.exception';
import type { GrantSource } from '../../src/ledger/core/types';
import { uid } from '../support/app';
import { startLedger, type LedgerHarness } from '../support/ledger';
import { LedgerModel, type Refusal } from '../support/ledger-model';

/**
 * Model-based property test of the real LedgerService (PostgreSQL) against the in-memory model:
 * random command sequences, run in random concurrent batches, through both the caller-transaction
 * API and the own-transaction (pipelined) wrappers. After every batch the model replays the
 * writes in the database's commit order (transaction ids) and everything must agree; the ledger's
 * invariants must hold; and at the end, replaying every command that took effect changes nothing.
 */

const UNIT = 100_000n; // 0.1 credit
const HOUR = 3600_000;

type Step =
  | { t: 'grant'; units: number; expiresInH: number | null; priority: number; source: GrantSource }
  | { t: 'hold'; units: number }
  | { t: 'increase'; hold: number; units: number }
  | { t: 'settle'; hold: number; units: number }
  | { t: 'void'; hold: number }
  | { t: 'expireHold'; hold: number }
  | { t: 'adjust'; hold: number; units: number }
  | { t: 'advance'; hours: number }
  | { t: 'replay'; step: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant('grant' as const),
      units: fc.integer({ min: 1, max: 40 }),
      expiresInH: fc.option(fc.integer({ min: 1, max: 6 }), { nil: null }),
      priority: fc.integer({ min: 0, max: 2 }),
      source: fc.constantFrom<GrantSource>('plan_allowance', 'top_up', 'admin', 'promotion'),
    }),
  },
  { weight: 5, arbitrary: fc.record({ t: fc.constant('hold' as const), units: fc.integer({ min: 1, max: 30 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('increase' as const), hold: fc.nat(), units: fc.integer({ min: 1, max: 10 }) }) },
  { weight: 5, arbitrary: fc.record({ t: fc.constant('settle' as const), hold: fc.nat(), units: fc.integer({ min: 0, max: 40 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('void' as const), hold: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('expireHold' as const), hold: fc.nat() }) },
  { weight: 6, arbitrary: fc.record({ t: fc.constant('adjust' as const), hold: fc.nat(), units: fc.integer({ min: 0, max: 60 }) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('advance' as const), hours: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('replay' as const), step: fc.nat() }) },
);

/** What one executed step did, as the service answered. */
interface Done {
  step: Step;
  /** Ids the step used (kept for replays). */
  ids: { hold?: string; grant?: string; key: string };
  /** The transaction it wrote, if any (its position in the commit order). */
  transactionId: string | null;
  refused: Refusal | null;
  answer: unknown;
  viaCaller: boolean;
}

describe('ledger against an in-memory model (fast-check, random interleavings)', () => {
  let h: LedgerHarness;

  beforeAll(async () => {
    h = await startLedger('2026-12-02T09:00:00.000Z');
  });
  afterAll(() => h.close());

  it('agrees with the model after every concurrent batch; invariants hold; replays change nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.tuple(stepArb, fc.boolean()), { minLength: 1, maxLength: 4 }), { minLength: 6, maxLength: 20 }),
        async (batches) => {
          const acc = await h.account(uid('model'));
          const model = new LedgerModel();
          const done: Done[] = [];
          const holds: string[] = [];
          let n = 0;

          const exec = async (step: Step, viaCaller: boolean, replayOf?: Done): Promise<Done> => {
            const now = h.clock.now();
            // Prefer holds the step can act on (open ones to settle, settled ones to adjust), so deep paths are reached.
            const pick = (i: number): string | undefined => {
              const wanted = step.t === 'adjust' ? 'settled' : 'reserved';
              const fit = holds.filter((id) => model.holds.get(id)?.status === wanted);
              const from = fit.length > 0 && i % 5 !== 0 ? fit : holds;
              return from.length ? from[i % from.length] : undefined;
            };
            const ids: Done['ids'] = replayOf?.ids ?? { key: `k_${String(n++).padStart(4, '0')}` };
            const run = <T>(viaEm: (em: any) => Promise<T>, own: () => Promise<T>): Promise<T> =>
              viaCaller ? h.ledger.transact(viaEm) : own();
            const result: Done = { step, ids, transactionId: null, refused: null, answer: null, viaCaller };
            try {
              switch (step.t) {
                case 'grant': {
                  ids.grant ??= `grt_${acc}_${ids.key}`;
                  const input = {
                    accountId: acc,
                    source: step.source,
                    amount: BigInt(step.units) * UNIT,
                    expiresAt: step.expiresInH === null ? null : new Date(now.getTime() + step.expiresInH * HOUR),
                    priority: step.priority,
                    grantId: ids.grant,
                    idempotencyKey: ids.key,
                    reason: 'model',
                    actor: 'test',
                  };
                  if (replayOf) input.expiresAt = (replayOf.answer as { grant: { expiresAt: Date | null } }).grant.expiresAt;
                  const r = await run(
                    (em) => h.ledger.grant(em, input),
                    () => h.ledger.grantTx(input),
                  );
                  result.answer = r;
                  result.transactionId = r.replayed ? null : r.transactionId;
                  break;
                }
                case 'hold': {
                  if (!ids.hold) {
                    ids.hold = `h_${acc}_${ids.key}`;
                    holds.push(ids.hold);
                  }
                  const input = {
                    accountId: acc,
                    holdId: ids.hold,
                    amount: BigInt(step.units) * UNIT,
                    reference: 'rt',
                    idempotencyKey: ids.key,
                  };
                  const r = await run(
                    (em) => h.ledger.createHold(em, input),
                    () => h.ledger.createHoldTx(input),
                  );
                  result.answer = r;
                  result.transactionId = r.replayed ? null : r.transactionId;
                  break;
                }
                case 'increase': {
                  ids.hold ??= pick(step.hold);
                  if (!ids.hold) return result;
                  const input = { holdId: ids.hold, amount: BigInt(step.units) * UNIT, idempotencyKey: ids.key };
                  const r = await run(
                    (em) => h.ledger.increaseHold(em, input),
                    () => h.ledger.increaseHoldTx(input),
                  );
                  result.answer = r;
                  result.transactionId = r.replayed ? null : r.transactionId;
                  break;
                }
                case 'settle':
                case 'void':
                case 'expireHold': {
                  ids.hold ??= pick(step.hold);
                  if (!ids.hold) return result;
                  const holdId = ids.hold;
                  const r =
                    step.t === 'settle'
                      ? await run(
                          (em) => h.ledger.settleHold(em, { holdId, amount: BigInt(step.units) * UNIT }),
                          () => h.ledger.settleHoldTx({ holdId, amount: BigInt(step.units) * UNIT }),
                        )
                      : step.t === 'void'
                        ? await run(
                            (em) => h.ledger.voidHold(em, holdId),
                            () => h.ledger.voidHoldTx(holdId),
                          )
                        : await run(
                            (em) => h.ledger.expireHold(em, holdId),
                            () => h.ledger.expireHoldTx(holdId),
                          );
                  result.answer = r;
                  result.transactionId = r.transactionId;
                  break;
                }
                case 'adjust': {
                  ids.hold ??= pick(step.hold);
                  if (!ids.hold) return result;
                  const input = { holdId: ids.hold, newCharge: BigInt(step.units) * UNIT, idempotencyKey: ids.key };
                  const r = await run(
                    (em) => h.ledger.adjustSettledHold(em, input),
                    () => h.ledger.adjustSettledHoldTx(input),
                  );
                  result.answer = r;
                  result.transactionId = r.replayed ? null : r.transactionId;
                  break;
                }
                case 'advance':
                case 'replay':
                  break;
              }
            } catch (error) {
              if (!(error instanceof BillingException)) throw error;
              result.refused =
                error.code === 'DL_BILLING_INSUFFICIENT_CREDITS'
                  ? 'insufficient'
                  : error.code === 'DL_BILLING_NOT_FOUND'
                    ? 'not_found'
                    : 'invalid';
              expect(
                ['DL_BILLING_INSUFFICIENT_CREDITS', 'DL_BILLING_NOT_FOUND', 'DL_BILLING_REQUEST_INVALID'],
                `${JSON.stringify(step)} ${ids.key}: ${error.message}`,
              ).toContain(error.code);
            }
            return result;
          };

          /** Applies a step that wrote to the model (at its commit position) and checks the answer agrees. */
          const applyToModel = (d: Done): void => {
            const now = h.clock.now();
            const s = d.step;
            const a = d.answer as any;
            switch (s.t) {
              case 'grant':
                model.grant(d.ids.grant!, BigInt(s.units) * UNIT, a.grant.expiresAt, s.priority, a.grant.createdAt);
                expect(a.grant.remaining).toBe(model.grants.get(d.ids.grant!)!.remaining);
                break;
              case 'hold':
                expect(model.hold(d.ids.hold!, BigInt(s.units) * UNIT, now)).toBeNull();
                break;
              case 'increase':
                expect(model.increase(d.ids.hold!, BigInt(s.units) * UNIT, now)).toBeNull();
                break;
              case 'settle':
              case 'void':
              case 'expireHold': {
                const mode = s.t === 'settle' ? 'settle' : s.t === 'void' ? 'void' : 'expire';
                const m = model.resolve(d.ids.hold!, mode, s.t === 'settle' ? BigInt(s.units) * UNIT : 0n, now);
                expect(m).toEqual({ charged: a.charged, released: a.released, first: true });
                break;
              }
              case 'adjust': {
                const m = model.adjust(d.ids.hold!, BigInt(s.units) * UNIT, now);
                expect(m).toEqual({ delta: a.delta });
                break;
              }
              default:
                break;
            }
          };

          const check = async (): Promise<void> => {
            const now = h.clock.now();
            const wallet = await h.ledger.wallet(undefined, acc);
            expect({ total: wallet.total, held: wallet.held, available: wallet.available, debt: wallet.debt }).toEqual(model.balance(now));
            expect(wallet.available >= 0n).toBe(true);
            const grants: { id: string; remaining: string }[] = await h.ds.query(
              `SELECT id, remaining::text FROM grants WHERE account_id = $1`,
              [acc],
            );
            expect(Object.fromEntries(grants.map((g) => [g.id, BigInt(g.remaining)]))).toEqual(
              Object.fromEntries([...model.grants.values()].map((g) => [g.id, g.remaining])),
            );
            const dbHolds: any[] = await h.ds.query(
              `SELECT id, status, amount::text, settled_amount::text AS settled, released_amount::text AS released,
                 charged_amount::text AS charged, debt_amount::text AS debt FROM holds WHERE account_id = $1`,
              [acc],
            );
            expect(
              Object.fromEntries(
                dbHolds.map((x) => [
                  x.id,
                  [x.status, BigInt(x.amount), BigInt(x.settled), BigInt(x.released), BigInt(x.charged), BigInt(x.debt)],
                ]),
              ),
            ).toEqual(
              Object.fromEntries(
                [...model.holds.values()].map((x) => [x.id, [x.status, x.amount, x.settled, x.released, x.charged, x.debt]]),
              ),
            );
            for (const x of dbHolds) expect(BigInt(x.settled) <= BigInt(x.amount)).toBe(true);
            // Conservation: every entry of the wallet sums to zero; stored balances = sums of entries.
            const [sum] = await h.ds.query(
              `SELECT coalesce(sum(e.amount), 0)::text AS total FROM ledger_entries e JOIN ledger_transactions t ON t.id = e.transaction_id WHERE t.account_id = $1`,
              [acc],
            );
            expect(sum.total).toBe('0');
            expect(await h.ledger.reconcile(acc)).toEqual([]);
            // Each hold resolves once.
            const resolutions: { n: string }[] = await h.ds.query(
              `SELECT count(*)::text AS n FROM ledger_transactions WHERE account_id = $1 AND kind IN ('settlement', 'void', 'release') GROUP BY hold_id HAVING count(*) > 1`,
              [acc],
            );
            expect(resolutions).toEqual([]);
          };

          for (const batch of batches) {
            const sequential = batch.length === 1 || batch.some(([s]) => s.t === 'advance');
            const runOne = async ([step, viaCaller]: [Step, boolean]): Promise<Done> => {
              if (step.t === 'advance') {
                h.clock.advance(step.hours * HOUR);
                await h.ledger.expireGrants(h.clock.now());
                model.expireGrants(h.clock.now());
                return { step, ids: { key: '' }, transactionId: null, refused: null, answer: null, viaCaller };
              }
              if (step.t === 'replay') {
                const effective = done.filter((d) => d.transactionId !== null);
                const original = effective.length ? effective[step.step % effective.length] : undefined;
                if (!original) return { step, ids: { key: '' }, transactionId: null, refused: null, answer: null, viaCaller };
                const again = await exec(original.step, viaCaller, original);
                expect(again.transactionId).toBeNull(); // nothing new written
                expect(again.refused).toBeNull();
                return again;
              }
              return exec(step, viaCaller);
            };
            let results: Done[];
            if (sequential) {
              results = [];
              for (const item of batch) {
                const before = model.balance(h.clock.now());
                const r = await runOne(item);
                results.push(r);
                if (r.transactionId) applyToModel(r);
                // Alone, the model predicts refusals exactly: an insufficient-credits refusal means the model could not afford it either.
                if (r.refused === 'insufficient') expect(before.available < BigInt((r.step as { units: number }).units) * UNIT).toBe(true);
              }
            } else {
              results = await Promise.all(batch.map(runOne));
              // Replay the writes in commit order (transaction ids grow under the wallet's lock).
              const writes = results
                .filter((r) => r.transactionId !== null)
                .sort((a, b) => Number(BigInt(a.transactionId!) - BigInt(b.transactionId!)));
              for (const w of writes) applyToModel(w);
            }
            done.push(...results.filter((r) => r.step.t !== 'replay'));
            await check();
          }

          // Replaying every command that took effect, with the same keys, changes nothing.
          const [countBefore] = await h.ds.query(`SELECT count(*)::text AS n FROM ledger_transactions WHERE account_id = $1`, [acc]);
          for (const d of done.filter((x) => x.transactionId !== null)) {
            const again = await exec(d.step, !d.viaCaller, d);
            expect(again.refused).toBeNull();
            expect(again.transactionId).toBeNull();
          }
          const [countAfter] = await h.ds.query(`SELECT count(*)::text AS n FROM ledger_transactions WHERE account_id = $1`, [acc]);
          expect(countAfter.n).toBe(countBefore.n);
          await check();
          // Concurrent batches were group-committed without a batch ever failing and being rerun.
          expect(h.ledger.stats.batchFallbacks).toBe(0);
        },
      ),
      { numRuns: Number(process.env.LEDGER_MODEL_RUNS ?? 30), endOnFailure: true },
    );
  });
});
