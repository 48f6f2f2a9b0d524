import { Injectable } from '@nestjs/common';
import type { PreparedStatement } from 'src/common/database/pipelined-transaction';
import type { TypedRead } from 'src/common/database/typed-read';
import { allowanceGrantId } from './allowance-keys';
import { grantsAllowanceHere, planAccountOf, type PlanAccount, type PlanAccountRow } from './plan-accounts';
import type { Plan } from 'src/plan-catalog/plan-catalog';
import type { Period } from 'src/plan-catalog/periods';

const ACCOUNTS_READ: PreparedStatement = {
  name: 'plan_accounts_read_v1',
  text: `SELECT a.id, a.plan, a.status, a.plan_overrides, a.billing_cycle_anchor FROM accounts a WHERE a.id = ANY($1::text[])`,
};

const GRANTED_READ: PreparedStatement = {
  name: 'plan_allowances_granted_v1',
  text: `SELECT g.id FROM grants g WHERE g.id = ANY($1::text[])`,
};

/** An account on its plan in a period (termsOf). */
export interface AccountTerms {
  account: PlanAccount;
  plan: Plan;
  period: Period;
}

/** The plans' reads for other modules (admission), as typed rows for a set of accounts. */
@Injectable()
export class PlanReads {
  /** The accounts (as their plan sees them) by id; an unknown account is absent. */
  accounts(ids: readonly string[]): TypedRead<Map<string, PlanAccount>> {
    return {
      call: { statement: ACCOUNTS_READ, values: [[...new Set(ids)]] },
      parse: (found) => {
        const accounts = (found as PlanAccountRow[]).map(planAccountOf).filter((a): a is PlanAccount => a !== null);
        return new Map(accounts.map((a) => [a.id, a]));
      },
    };
  }

  /**
   * The accounts whose period allowance this service grants and has not granted yet (the lazy
   * twin of the monthly reset grants it); null when none of them is granted here (no statement).
   */
  allowancesPending(terms: readonly AccountTerms[]): TypedRead<Set<string>> | null {
    const due = terms
      .filter((t) => grantsAllowanceHere(t.plan))
      .map((t) => ({ accountId: t.account.id, grantId: allowanceGrantId(t.account.id, t.period) }));
    if (due.length === 0) return null;
    return {
      call: { statement: GRANTED_READ, values: [due.map((d) => d.grantId)] },
      parse: (found) => {
        const granted = new Set((found as { id: string }[]).map((r) => r.id));
        return new Set(due.filter((d) => !granted.has(d.grantId)).map((d) => d.accountId));
      },
    };
  }
}
