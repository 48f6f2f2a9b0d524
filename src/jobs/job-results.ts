import { formatCredits } from '../common/money';
import type { ExpireGrantsResult } from '../ledger/ledger.types';

/** What a job's work returns, before it is shown (jobs register their work in their own modules). */
type GrantExpiryOutcome = Omit<ExpireGrantsResult, 'amount'> & { amount: bigint | string };

/**
 * Jobs whose result holds amounts of micro-credits: shown as credits ("0.833333"), like every
 * amount the API answers. The other jobs' results are counts, ids and already formatted amounts.
 */
const PRESENTERS: Partial<Record<string, (result: unknown) => unknown>> = {
  'grant-expiry': (result) => {
    const r = result as GrantExpiryOutcome;
    return { ...r, amount: asCredits(r.amount) };
  },
};

export function presentJobResult(job: string, result: unknown): unknown {
  const present = PRESENTERS[job];
  return present && result !== null && typeof result === 'object' ? present(result) : result;
}

/**
 * Micro-credits, as a bigint or as integer text (what the grant-expiry registration in
 * src/metering/sweeper.service.ts passes today), become "0.833333"; text already in credits is kept.
 */
function asCredits(amount: bigint | string): string {
  if (typeof amount === 'bigint') return formatCredits(amount);
  return /^-?\d+$/.test(amount) ? formatCredits(BigInt(amount)) : amount;
}
