import type { EntityManager } from 'typeorm';
import type { Call, PreparedStatement } from 'src/common/database/pipelined-transaction';
import type { Period } from './reports.service';

/** What a runtime row contributes to the usage rollups. */
export interface RollupState {
  account_id: string;
  user_id: string | null;
  environment: Record<string, unknown> | null;
  size_class?: string | null;
  status: string;
  closed_ms: string | number | bigint;
  charged: string | bigint;
  settled_at: Date | string | null;
}

export interface RollupDelta {
  accountId: string;
  hour: Date;
  environment: string;
  userId: string;
  runtimes: bigint;
  runningMs: bigint;
  credits: bigint;
}

const HOUR_MS = 3_600_000;

/** A settled runtime counts once with its running time and its charge; any other state only with its charge (0 when voided). */
function contribution(s: RollupState): { runtimes: bigint; runningMs: bigint; credits: bigint } {
  const settled = s.status === 'settled';
  return { runtimes: settled ? 1n : 0n, runningMs: settled ? BigInt(s.closed_ms) : 0n, credits: BigInt(s.charged) };
}

export function environmentName(s: Pick<RollupState, 'environment' | 'size_class'>): string {
  const name = s.environment?.name;
  return typeof name === 'string' ? name : '';
}

/**
 * The change a runtime's row makes to the rollups, from its state before to its state after a
 * settlement or correction posted at `postedAt`; empty when nothing changes. Its credits go to the
 * hour they are posted, as the ledger's transaction, so a month's usage credits are the runtime
 * charges of the month's statement, corrections included; the runtime and its running time are
 * counted in the hour of its first settlement, which never moves (a correction's change of running
 * time, or a launch failure after settlement, is applied there).
 */
export function rollupDelta(before: RollupState, after: RollupState, postedAt: Date): RollupDelta[] {
  const a = contribution(before);
  const b = contribution(after);
  const delta = { runtimes: b.runtimes - a.runtimes, runningMs: b.runningMs - a.runningMs, credits: b.credits - a.credits };
  if (delta.runtimes === 0n && delta.runningMs === 0n && delta.credits === 0n) return [];
  const first = before.settled_at ?? after.settled_at;
  if (!first) return [];
  const key = { accountId: after.account_id, environment: environmentName(after), userId: after.user_id ?? '' };
  const counted = hourOf(new Date(first));
  const posted = hourOf(postedAt);
  if (counted.getTime() === posted.getTime()) return [{ ...key, hour: posted, ...delta }];
  return [
    ...(delta.runtimes !== 0n || delta.runningMs !== 0n
      ? [{ ...key, hour: counted, runtimes: delta.runtimes, runningMs: delta.runningMs, credits: 0n }]
      : []),
    ...(delta.credits !== 0n ? [{ ...key, hour: posted, runtimes: 0n, runningMs: 0n, credits: delta.credits }] : []),
  ];
}

function hourOf(at: Date): Date {
  const ms = at.getTime();
  return new Date(ms - (((ms % HOUR_MS) + HOUR_MS) % HOUR_MS));
}

/**
 * The rollup tables: each grain (hour, day, month) at two levels of detail. `detailed` is per account,
 * environment and user (reports by environment or user); `account` per account only (reports by
 * account or day, top consumers), a few rows per account and period instead of up to one per
 * environment × user. Same key order in every table: account first, then the period.
 */
export const USAGE_ROLLUPS = {
  detailed: {
    keys: ['account_id', 'environment', 'user_id'],
    hour: 'usage_rollups',
    day: 'usage_daily_rollups',
    month: 'usage_monthly_rollups',
  },
  account: {
    keys: ['account_id'],
    hour: 'usage_account_hourly_rollups',
    day: 'usage_account_daily_rollups',
    month: 'usage_account_monthly_rollups',
  },
} as const;
export type UsageLevel = keyof typeof USAGE_ROLLUPS;
export const USAGE_GRAINS = ['hour', 'day', 'month'] as const;

const BUCKET: Record<(typeof USAGE_GRAINS)[number], string> = {
  hour: 'hour',
  day: `(hour AT TIME ZONE 'UTC')::date`,
  month: `date_trunc('month', hour AT TIME ZONE 'UTC')::date`,
};

/**
 * One statement adding the rows of `input` (a query of account_id, hour, environment, user_id,
 * runtimes, running_ms, credits) to every rollup table; each table's rows are grouped and sorted by
 * its key, so concurrent writers lock in one order. The metering and the benchmark both use it.
 */
export function usageRollupsUpsert(input: string): string {
  const inserts = Object.values(USAGE_ROLLUPS).flatMap((level) =>
    USAGE_GRAINS.map((grain) => {
      const [account, ...rest] = level.keys;
      const key = [account, grain, ...rest].join(', ');
      const groups = [account, grain, ...rest].map((_, i) => i + 1).join(', ');
      return `INSERT INTO ${level[grain]} AS r (${key}, runtimes, running_ms, credits)
       SELECT ${[account, BUCKET[grain], ...rest].join(', ')}, sum(runtimes), sum(running_ms), sum(credits)
       FROM input GROUP BY ${groups} ORDER BY ${groups}
       ON CONFLICT (${key}) DO UPDATE
         SET runtimes = r.runtimes + EXCLUDED.runtimes, running_ms = r.running_ms + EXCLUDED.running_ms, credits = r.credits + EXCLUDED.credits`;
    }),
  );
  const last = inserts.pop()!;
  return `WITH input AS (${input}),
     ${inserts.map((sql, i) => `w${i} AS (${sql})`).join(',\n     ')}
     ${last}`;
}

const UPSERT = usageRollupsUpsert(
  `SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[])
     AS u(account_id, hour, environment, user_id, runtimes, running_ms, credits)`,
);

const UPSERT_STATEMENT: PreparedStatement = { name: 'usage_rollups_add_v1', text: UPSERT };

/** Adds deltas to every usage rollup table in the caller's transaction (one statement; rows sorted so concurrent writers lock in one order). */
export async function addToUsageRollups(em: EntityManager, deltas: readonly RollupDelta[]): Promise<void> {
  const call = usageRollupsCall(deltas);
  if (call) await em.query(call.statement.text, call.values);
}

/** addToUsageRollups' statement (null when nothing changes), for a caller that sends it with others in one round trip. */
export function usageRollupsCall(deltas: readonly RollupDelta[]): Call | null {
  const merged = new Map<string, RollupDelta>();
  for (const d of deltas) {
    const key = JSON.stringify([d.accountId, d.hour.getTime(), d.environment, d.userId]);
    const m = merged.get(key);
    if (m) {
      m.runtimes += d.runtimes;
      m.runningMs += d.runningMs;
      m.credits += d.credits;
    } else merged.set(key, { ...d });
  }
  const list = [...merged.values()];
  if (list.length === 0) return null;
  return {
    statement: UPSERT_STATEMENT,
    values: [
      list.map((d) => d.accountId),
      list.map((d) => d.hour.toISOString()),
      list.map((d) => d.environment),
      list.map((d) => d.userId),
      list.map((d) => d.runtimes.toString()),
      list.map((d) => d.runningMs.toString()),
      list.map((d) => d.credits.toString()),
    ],
  };
}

const DAY_MS = 86_400_000;

type Range = [number, number];

function startOfMonth(ms: number, up: boolean): number {
  const d = new Date(ms);
  const floor = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  return up && floor < ms ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) : floor;
}

/** Splits [from, to) into whole months (unless `months` is false), whole days around them and hours around those. */
export function usageSegments(from: number, to: number, months = true): { hours: Range[]; days: Range[]; months: Range[] } {
  const out = { hours: [] as Range[], days: [] as Range[], months: [] as Range[] };
  const byDay = (lo: number, hi: number) => {
    const first = Math.ceil(lo / DAY_MS) * DAY_MS;
    const last = Math.floor(hi / DAY_MS) * DAY_MS;
    if (first >= last) {
      if (lo < hi) out.hours.push([lo, hi]);
      return;
    }
    out.days.push([first, last]);
    if (lo < first) out.hours.push([lo, first]);
    if (last < hi) out.hours.push([last, hi]);
  };
  const first = startOfMonth(from, true);
  const last = startOfMonth(to, false);
  if (!months || first >= last) {
    byDay(from, to);
  } else {
    out.months.push([first, last]);
    byDay(from, first);
    byDay(last, to);
  }
  return out;
}

/**
 * The usage of a period (whole hours) from one level of rollups (`USAGE_ROLLUPS`): whole UTC months
 * from its monthly table, the whole days around them from its daily one, the hours around those
 * from its hourly one (by day never the monthly table). One branch per range, each with its bounds
 * as plain parameters (appended to `params`), so the planner estimates every range from the table's
 * statistics and reads no table the period does not need. The account level has no environment or
 * user: they read as ''.
 */
export function usageSource(level: UsageLevel, p: Period, params: unknown[], byDay = false): string {
  const t = USAGE_ROLLUPS[level];
  const keys = level === 'detailed' ? `u.environment, u.user_id` : `''::text AS environment, ''::text AS user_id`;
  const s = usageSegments(p.from.getTime(), p.to.getTime(), !byDay);
  const at = (ms: number) => new Date(ms).toISOString();
  const day = (ms: number) => at(ms).slice(0, 10);
  const branch = (table: string, column: string, type: string, start: string, [lo, hi]: [string, string]) => {
    params.push(lo, hi);
    return `SELECT u.account_id, ${start} AS at, ${keys}, u.runtimes, u.running_ms, u.credits
    FROM ${table} u WHERE u.${column} >= $${params.length - 1}::${type} AND u.${column} < $${params.length}::${type}`;
  };
  const branches = [
    ...s.hours.map((r) => branch(t.hour, 'hour', 'timestamptz', 'u.hour', [at(r[0]), at(r[1])])),
    ...s.days.map((r) => branch(t.day, 'day', 'date', `u.day::timestamp AT TIME ZONE 'UTC'`, [day(r[0]), day(r[1])])),
    ...s.months.map((r) => branch(t.month, 'month', 'date', `u.month::timestamp AT TIME ZONE 'UTC'`, [day(r[0]), day(r[1])])),
  ];
  return `(${branches.join('\n    UNION ALL\n    ')}) u`;
}
