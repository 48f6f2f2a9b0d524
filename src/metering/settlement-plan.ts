import { adjustOperation } from 'src/ledger/operations/adjust-hold';
import type { Operation } from 'src/ledger/operations/operation';
import { resolveOperation } from 'src/ledger/operations/resolve-hold';
import type { AdjustResult, ResolveResult } from 'src/ledger/ledger.types';
import { chargeFor } from 'src/pricing/charges';
import type { Session } from './core/sessions';
import type { RuntimeStatus } from './entities/runtime.entity';
import type { RuntimeRow } from './runtime-row';

/** A runtime's settlement fields, as its row keeps them. */
export interface SettlementFields {
  status: string;
  charged: bigint;
  released: bigint;
  settlement: string | null;
  settledAt: Date | string | null;
}

/** One ledger operation a runtime's session asks for, on its account's wallet, and what its answer does to the runtime's fields. */
export interface LedgerStep {
  accountId: string;
  op: Operation<unknown>;
  /** Applies the operation's answer to the runtime's fields (given to `settle`). */
  apply(answer: unknown, fields: SettlementFields): void;
}

/**
 * What a rebuilt session means for a runtime's money, decided in memory on its locked row (`current`)
 * and its session, so that a chunk's runtimes go to the ledger as one batch:
 * - a termination settles the hold (charge = ceil(rate × running ms / 3,600,000), capped at the
 *   hold; the ledger releases the rest), or, once settled, a late event that changes the charge
 *   posts a correction; a hold given back for a launch failure or a start that never came (settled
 *   at zero) is corrected the same way, one voided before that rule cannot be charged again;
 * - a launch failure settles the hold at zero (every credit back, and a run that later events show
 *   can still be charged by a correction), or corrects a settled charge to zero;
 * - otherwise the runtime's status follows the session (or `terminating` under a command).
 */
export interface SettlementPlan {
  /** The ledger's part, if any (at most one operation per runtime and chunk). */
  ledger: LedgerStep | null;
  /** The runtime's fields once the ledger's step, if any, has been applied to them. */
  fields: SettlementFields;
  /** Its open commands are acknowledged (a termination or a failed launch). */
  acknowledges: boolean;
  /** The settlement hooks run for it (a termination), with whether it is the runtime's first settlement. */
  settled: { first: boolean } | null;
}

export function planSettlement(
  current: RuntimeRow,
  session: Session,
  opts: { now: Date; commanded: boolean; count: number },
): SettlementPlan {
  const { now } = opts;
  const fields: SettlementFields = {
    status: current.status,
    charged: BigInt(current.charged),
    released: BigInt(current.released),
    settlement: current.settlement,
    settledAt: current.settled_at,
  };
  const hold = current.hold_id;
  const accountId = current.account_id;
  const cap = BigInt(current.reserved_amount);
  const resolved = current.status === 'settled' || current.status === 'voided';
  if (session.status === 'launch_failed') {
    let ledger: LedgerStep | null = null;
    if (hold && current.status !== 'voided') {
      ledger =
        current.status === 'settled'
          ? step(
              accountId,
              adjustOperation({
                holdId: hold,
                newCharge: 0n,
                idempotencyKey: `adjust:${current.runtime_id}:launch_failed`,
                reason: 'launch failed',
              }),
              () => undefined,
            )
          : // Settled at zero, not voided: every credit goes back all the same, and a run that later
            // events show to have happened can still be charged by a correction of this settlement.
            step(
              accountId,
              resolveOperation(hold, 'settle', 0n, { reason: `launch failed: ${session.terminationReason ?? 'no reason given'}` }),
              () => undefined,
            );
    }
    Object.assign(fields, { status: 'voided', charged: 0n, released: cap, settlement: 'launch_failed', settledAt: now });
    return { ledger, fields, acknowledges: true, settled: null };
  }
  if (session.status === 'terminated') {
    const charge = hold ? min(cap, chargeFor(BigInt(current.rate_per_hour), session.closedMs)) : 0n;
    // A hold given back for a launch failure or a start that never came (settled at zero) can be corrected.
    const givenBack = current.status === 'voided' && (current.settlement === 'launch_failed' || current.settlement === 'never_started');
    let ledger: LedgerStep | null = null;
    if (hold && !resolved) {
      ledger = step<ResolveResult>(
        accountId,
        resolveOperation(hold, 'settle', charge, { reason: `runtime ${current.runtime_id} terminated` }),
        (result, f) => Object.assign(f, { charged: result.charged, released: result.released }),
      );
    } else if (hold && (current.status === 'settled' || givenBack) && charge !== fields.charged) {
      // A late event changed the history of a settled runtime: post the correction.
      const correction = adjustOperation({
        holdId: hold,
        newCharge: charge,
        idempotencyKey: `adjust:${current.runtime_id}:${opts.count}:${now.getTime()}:${charge}`,
        reason: `late event for runtime ${current.runtime_id}`,
      });
      ledger = step<AdjustResult | null>(accountId, givenBack ? whenSettled(correction) : correction, (result, f) => {
        if (result) Object.assign(f, { charged: result.charged, released: cap - result.charged });
      });
    }
    Object.assign(fields, {
      status: current.status === 'voided' && !hold ? 'voided' : 'settled',
      settlement: 'events',
      settledAt: fields.settledAt ?? now,
    });
    return { ledger, fields, acknowledges: true, settled: { first: !resolved } };
  }
  if (!resolved) fields.status = opts.commanded ? 'terminating' : (session.status as RuntimeStatus);
  return { ledger: null, fields, acknowledges: false, settled: null };
}

/** An operation with its answer's effect, its answer's type erased for a batch of mixed operations. */
function step<R>(accountId: string, op: Operation<R>, apply: (answer: R, fields: SettlementFields) => void): LedgerStep {
  return { accountId, op, apply: (answer, fields) => apply(answer as R, fields) };
}

/**
 * A correction of a hold given back for a launch failure: only one settled at zero (the rule since
 * launch failures settle) can be charged; one voided before it stays as it is (answer null).
 */
function whenSettled(op: Operation<AdjustResult>): Operation<AdjustResult | null> {
  return { ...op, decide: (state, now) => (state.hold?.status === 'settled' ? op.decide(state, now) : { write: null, result: null }) };
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
