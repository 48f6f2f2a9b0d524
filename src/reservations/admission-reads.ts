import { Injectable } from '@nestjs/common';
import type { Call, PreparedStatement } from 'src/common/database/pipelined-transaction';
import type { TypedRead } from 'src/common/database/typed-read';
import { sentCausesRead } from 'src/messaging/notifications';
import { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import { PlanReads, QuotaReads } from 'src/plans/plan-reads';
import { SpendLimitReads, type Scope } from 'src/spend-limits/spend-limit-reads';
import { AccountAdmission, launchNoticeCauses, type KnownRuntime } from './admission';

/**
 * What admission reads, under the wallet locks of a batch's accounts, from the modules that own
 * it (plans, quotas, spend limits, notifications: their typed reads), in two round trips at most:
 * `first` with the locks (accounts, known runtimes, spend limits in scope), `counts` when the
 * accounts' checks count something (usage, spend, alerts and notices sent, allowances to grant).
 */

/** Reads sent together in one round trip, and their rows made into one value. */
export interface Reads<T> {
  calls: Call[];
  parse(rows: unknown[][]): T;
}

function together<A extends unknown[]>(reads: { [K in keyof A]: TypedRead<A[K]> | null }): Reads<{ [K in keyof A]: A[K] | undefined }> {
  const sent = (reads as (TypedRead<unknown> | null)[]).filter((r): r is TypedRead<unknown> => r !== null);
  return {
    calls: sent.map((r) => r.call),
    parse: (rows) => {
      let i = 0;
      return (reads as (TypedRead<unknown> | null)[]).map((r) => (r ? r.parse(rows[i++] ?? []) : undefined)) as {
        [K in keyof A]: A[K] | undefined;
      };
    },
  };
}

const KNOWN_RUNTIMES: PreparedStatement = {
  name: 'admission_known_runtimes_v2',
  text: `SELECT r.runtime_id, r.account_id, r.reservation_id IS NOT NULL AS reserved, r.status IN ('settled', 'voided') AS ended
    FROM runtimes r WHERE r.runtime_id = ANY($1::text[])`,
};

function knownRuntimesRead(runtimeIds: readonly string[]): TypedRead<Map<string, KnownRuntime>> {
  return {
    call: { statement: KNOWN_RUNTIMES, values: [[...runtimeIds]] },
    parse: (found) =>
      new Map(
        (found as { runtime_id: string; account_id: string; reserved: boolean; ended: boolean }[]).map((r) => [
          r.runtime_id,
          { account: r.account_id, reserved: r.reserved, ended: r.ended },
        ]),
      ),
  };
}

/** Who launches (the reads' key). */
export interface Launcher {
  runtimeId: string;
  accountId: string;
  userId: string | null;
}

export interface FirstReads {
  runtimes: Map<string, KnownRuntime>;
  /** Each account's admission, before its counts. */
  accounts: Map<string, AccountAdmission>;
}

@Injectable()
export class AdmissionReads {
  constructor(
    private readonly catalog: PlanCatalog,
    private readonly plans: PlanReads,
    private readonly quotas: QuotaReads,
    private readonly spendLimits: SpendLimitReads,
  ) {}

  /** Sent with the wallet locks: the accounts, the known runtimes, the spend limits in scope. */
  first(launchers: readonly Launcher[], now: Date): Reads<FirstReads> {
    const scopes: Scope[] = launchers.map((l) => ({ accountId: l.accountId, userId: l.userId ?? '' }));
    const reads = together([
      this.plans.accounts(launchers.map((l) => l.accountId)),
      knownRuntimesRead(launchers.map((l) => l.runtimeId)),
      this.spendLimits.limitsInScope(scopes),
    ]);
    return {
      calls: reads.calls,
      parse: (rows) => {
        const [accounts, runtimes, limits] = reads.parse(rows);
        const admissions = new Map<string, AccountAdmission>();
        for (const accountId of new Set(launchers.map((l) => l.accountId))) {
          const ofAccount = scopes.filter((s) => s.accountId === accountId);
          const inScope = new Map(ofAccount.map((s) => [s.userId, limits?.get(`${accountId}:${s.userId}`) ?? []]));
          admissions.set(
            accountId,
            AccountAdmission.of(this.catalog, accountId, { account: accounts?.get(accountId), limits: inScope }, now),
          );
        }
        return { runtimes: runtimes ?? new Map(), accounts: admissions };
      },
    };
  }

  /**
   * What the accounts' checks count, given to each (null: nothing to count, no statement; notices
   * are then taken as not sent; so is a low balance's whose wallet's `rises` were not read before).
   * Returns the accounts whose period allowance is still to be granted.
   */
  counts(
    accounts: readonly AccountAdmission[],
    agents: ReadonlyMap<string, readonly string[]>,
    rises: (accountId: string) => bigint | undefined = () => undefined,
  ): Reads<Set<string>> | null {
    const known = accounts.filter((a) => a.terms !== null);
    const needs = new Map(known.map((a) => [a, a.needs()]));
    const counting = known.filter((a) => needs.get(a)!.usage);
    const scopes = known.flatMap((a) => needs.get(a)!.scopes.map((userId) => ({ accountId: a.accountId, userId })));
    const allowances = this.plans.allowancesPending(known.map((a) => a.terms!));
    if (counting.length === 0 && scopes.length === 0 && allowances === null) return null;
    const month = needs.get(known[0]!)!.month;
    const reads = together([
      counting.length > 0
        ? this.quotas.usage(
            counting.map((a) => ({ accountId: a.accountId, period: a.terms!.period, agents: agents.get(a.accountId) ?? [] })),
          )
        : null,
      scopes.length > 0 ? this.spendLimits.spend(scopes, month) : null,
      scopes.length > 0
        ? this.spendLimits.alertsSent(
            known.flatMap((a) => needs.get(a)!.limits),
            month,
          )
        : null,
      sentCausesRead(known.flatMap((a) => launchNoticeCauses(a.accountId, a.terms!.period, rises(a.accountId)))),
      allowances,
    ]);
    return {
      calls: reads.calls,
      parse: (rows) => {
        const [usage, spend, alerts, sent, pending] = reads.parse(rows);
        for (const a of known) {
          const ofAccount = new Map(needs.get(a)!.scopes.map((s) => [s, spend?.get(`${a.accountId}:${s}`) ?? { charged: 0n, held: 0n }]));
          a.counted({ usage: usage?.get(a.accountId), spend: ofAccount, alertsSent: alerts ?? new Set(), noticesSent: sent ?? new Set() });
        }
        return pending ?? new Set();
      },
    };
  }
}
