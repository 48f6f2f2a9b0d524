import { formatCredits } from 'src/common/money';
import { explain } from './explain';
import type { Balance, GrantView, StatementEntry } from './ledger.types';

/**
 * A statement entry's JSON in the ledger's HTTP API: amounts as 6-decimal credit strings, dates as
 * ISO 8601.
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

/** The JSON of a balance and of a grant, the same in the audit log's rows and in the HTTP answers (the contract's shapes). */
export function balanceJson(b: Balance): { total: string; held: string; available: string; debt: string } {
  return { total: formatCredits(b.total), held: formatCredits(b.held), available: formatCredits(b.available), debt: formatCredits(b.debt) };
}

export interface GrantJson {
  id: string;
  source: string;
  amount: string;
  remaining: string;
  priority: number;
  expiresAt: string | null;
  createdAt: string;
}

export function grantJson(g: GrantView): GrantJson {
  return {
    id: g.id,
    source: g.source,
    amount: formatCredits(g.amount),
    remaining: formatCredits(g.remaining),
    priority: g.priority,
    expiresAt: g.expiresAt?.toISOString() ?? null,
    createdAt: g.createdAt.toISOString(),
  };
}
