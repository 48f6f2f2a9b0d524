import { formatCredits } from 'src/common/money';
import { explain } from './explain';
import type { StatementEntry } from './ledger.types';

/**
 * A statement entry's JSON in the ledger's HTTP API: amounts as 6-decimal credit strings, dates as
 * ISO 8601 (a balance's and a grant's JSON: `operations/balance.ts`).
 */
export function statementBody(e: StatementEntry): Record<string, unknown> {
  return {
    id: e.id,
    at: e.at.toISOString(),
    kind: e.kind,
    amount: formatCredits(e.amount),
    balanceAfter: formatCredits(e.totalAfter),
    heldAfter: formatCredits(e.heldAfter),
    availableAfter: formatCredits(e.availableAfter),
    explanation: explain(e),
    reference: e.reference,
    holdId: e.holdId,
    grantId: e.grantId,
  };
}
