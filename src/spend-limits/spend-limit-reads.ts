import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { PreparedStatement } from 'src/common/database/pipelined-transaction';
import { rows } from 'src/common/database/transaction';
import type { TypedRead } from 'src/common/database/typed-read';
import type { Period } from 'src/plan-catalog/periods';

export interface LimitRow {
  id: string;
  account_id: string;
  scope_user_id: string;
  period: string;
  limit_micros: string | null;
  thresholds: number[];
}

export interface Spend {
  charged: bigint;
  held: bigint;
}

/**
 * The runtime-spend rule, written once for every read of spend (SQL expressions for its parameters):
 * of the runtimes of the account whose user passes `users` (a condition on `user_id`), the settled
 * charges of those reserved in the period, and the holds open now of those reserved before its end (a
 * runtime reserved last month and still running counts in this month's held, as do its extensions).
 * One row for the whole scope, or with `perUser` one per user (`user_id`); `charged` and `held` as
 * text, `alsoCharged` added to `charged` (one statement, no subquery around it: the plans stay as
 * they were when each read wrote the rule itself).
 */
function runtimeSpendQuery(p: {
  account: string;
  users: string;
  from: string;
  to: string;
  perUser?: boolean;
  alsoCharged?: string;
}): string {
  const inPeriod = `created_at >= ${p.from} AND created_at < ${p.to}`;
  const user = p.perUser ? 'user_id, ' : '';
  return `SELECT ${user}(COALESCE(sum(charged) FILTER (WHERE status IN ('settled', 'voided') AND in_period), 0)${p.alsoCharged ? `\n        + ${p.alsoCharged}` : ''})::text AS charged,
      COALESCE(sum(reserved_amount) FILTER (WHERE status NOT IN ('settled', 'voided')), 0)::text AS held
    FROM (SELECT ${user}status, charged, reserved_amount, (${inPeriod}) AS in_period
          FROM runtimes
          WHERE account_id = ${p.account} AND ${p.users} AND hold_id IS NOT NULL
            AND ((${inPeriod}) OR (status IN ('reserved', 'running', 'paused', 'terminating') AND created_at < ${p.to}))) r${p.perUser ? '\n    GROUP BY user_id' : ''}`;
}

/**
 * The query of a scope's spend in a period (SQL expressions for its parameters; `user` NULL: the
 * whole account): its runtimes' spend (runtimeSpendQuery), and for the whole account its ancillary
 * charges of the period.
 */
function spendQuery(p: { account: string; user: string; from: string; to: string }): string {
  // An account-wide limit also counts its priced ancillary usage of the period (storage hours, egress
  // reports: what is due, paid or not); a member's limit counts runtimes only (storage has no user).
  const ancillary = `CASE WHEN ${p.user} IS NULL THEN (SELECT COALESCE(sum(a.amount), 0) FROM ancillary_charges a
            WHERE a.account_id = ${p.account} AND a.bucket >= ${p.from} AND a.bucket < ${p.to}) ELSE 0 END`;
  return runtimeSpendQuery({ ...p, users: `(${p.user} IS NULL OR user_id = ${p.user})`, alsoCharged: ancillary });
}

const LIMITS_READ: PreparedStatement = {
  name: 'spend_limits_in_scope_v1',
  text: `SELECT l.id, l.account_id, l.scope_user_id, l.period, l.limit_micros::text AS limit_micros, l.thresholds
    FROM spend_limits l
    WHERE l.account_id = ANY($1::text[]) AND l.scope_user_id = ANY($2::text[])
    ORDER BY l.account_id, l.scope_user_id`,
};

const SPEND_READ: PreparedStatement = {
  name: 'spend_of_scopes_v2',
  text: `SELECT s.account, s.scope, sp.charged, sp.held
    FROM jsonb_to_recordset($1::jsonb) AS s(account text, scope text),
      LATERAL (${spendQuery({ account: 's.account', user: "nullif(s.scope, '')", from: '$2::timestamptz', to: '$3::timestamptz' })}) sp`,
};

const ALERTS_READ: PreparedStatement = {
  name: 'spend_limit_alerts_sent_v2',
  text: `SELECT al.limit_id, al.kind, al.threshold, al.limit_micros::text AS limit_micros
    FROM spend_limit_alerts al WHERE al.limit_id = ANY($1::text[]) AND al.period_start = $2`,
};

/** A scope of a spend limit: the account, and the member ('' for the whole account). */
export interface Scope {
  accountId: string;
  userId: string;
}

/**
 * The key of an alert sent (or due): its limit, kind and threshold; the limit reached, by the amount
 * reached (a limit raised after it was reached is reached again at the new amount).
 */
export function alertKey(limitId: string, alert: { kind: string; threshold: number }, limitMicros: string | null): string {
  return alert.kind === 'reached' ? `${limitId}:reached:${limitMicros}` : `${limitId}:${alert.kind}:${alert.threshold}`;
}

/** A scope's spend in a period. */
export async function spendOf(em: Pick<EntityManager, 'query'>, accountId: string, userId: string | null, period: Period): Promise<Spend> {
  const [row] = await rows<{ charged: string; held: string }>(em, spendQuery({ account: '$1', user: '$2::text', from: '$3', to: '$4' }), [
    accountId,
    userId,
    period.start.toISOString(),
    period.end.toISOString(),
  ]);
  return { charged: BigInt(row?.charged ?? '0'), held: BigInt(row?.held ?? '0') };
}

/**
 * The spend in a period of each of these members of an account, as spendOf reads a member's (the
 * same runtimeSpendQuery, no ancillary usage: a member's limit counts runtimes only), in one read of the account's runtimes of
 * the period and those still holding credits: a page of member limits reads them once, not once per
 * limit. A member without such runtimes is missing from the map (spent and held 0).
 */
export async function spendOfMembers(
  em: Pick<EntityManager, 'query'>,
  accountId: string,
  userIds: readonly string[],
  period: Period,
): Promise<Map<string, Spend>> {
  if (userIds.length === 0) return new Map();
  const found = await rows<{ user_id: string; charged: string; held: string }>(
    em,
    runtimeSpendQuery({ account: '$1', users: 'user_id = ANY($2::text[])', from: '$3', to: '$4', perUser: true }),
    [accountId, [...userIds], period.start.toISOString(), period.end.toISOString()],
  );
  return new Map(found.map((r) => [r.user_id, { charged: BigInt(r.charged), held: BigInt(r.held) }]));
}

/** The spend limits' reads for other modules (admission), as typed rows for a set of accounts. */
@Injectable()
export class SpendLimitReads {
  /**
   * The limits in scope of launches by these members (the account-wide one, and the member's own),
   * by `accountId:userId` (userId '' for none), account-wide first.
   */
  limitsInScope(scopes: readonly Scope[]): TypedRead<Map<string, LimitRow[]>> {
    const accounts = [...new Set(scopes.map((s) => s.accountId))];
    const users = [...new Set(['', ...scopes.map((s) => s.userId)])];
    return {
      call: { statement: LIMITS_READ, values: [accounts, users] },
      parse: (found) => {
        const limits = found as LimitRow[];
        const inScope = (s: Scope): LimitRow[] =>
          limits.filter((l) => l.account_id === s.accountId && (l.scope_user_id === '' || l.scope_user_id === s.userId));
        return new Map(scopes.map((s) => [`${s.accountId}:${s.userId}`, inScope(s)]));
      },
    };
  }

  /** The spend of each scope in `month`, by `accountId:userId`. */
  spend(scopes: readonly Scope[], month: Period): TypedRead<Map<string, Spend>> {
    const asked = scopes.map((s) => ({ account: s.accountId, scope: s.userId }));
    return {
      call: { statement: SPEND_READ, values: [JSON.stringify(asked), month.start.toISOString(), month.end.toISOString()] },
      parse: (found) =>
        new Map(
          (found as { account: string; scope: string; charged: string; held: string }[]).map((r) => [
            `${r.account}:${r.scope}`,
            { charged: BigInt(r.charged), held: BigInt(r.held) },
          ]),
        ),
    };
  }

  /** The alerts of these limits already sent in `month` (alertKey). */
  alertsSent(limitIds: readonly string[], month: Period): TypedRead<Set<string>> {
    return {
      call: { statement: ALERTS_READ, values: [[...limitIds], month.start.toISOString()] },
      parse: (found) =>
        new Set(
          (found as { limit_id: string; kind: string; threshold: number; limit_micros: string | null }[]).map((a) =>
            alertKey(a.limit_id, a, a.limit_micros),
          ),
        ),
    };
  }
}
