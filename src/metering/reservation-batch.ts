import type { Call, PreparedStatement } from '../common/database/pipelined-transaction';
import type { Correlation } from '../common/context/correlation';
import { BillingException } from '../common/errors/billing.exception';
import { formatCredits } from '../common/money';
import type { LedgerBatch } from '../ledger/ledger.batch';
import { createHoldOperation } from '../ledger/ledger.decisions';
import type { CreateHoldInput, HoldResult } from '../ledger/ledger.types';
import { PLAN_ACCOUNT_COLUMNS, grantsAllowanceHere, planAccountOf, termsOf, type PlanAccount, type PlanAccountRow } from '../plans/plan-accounts';
import { allowanceGrantId } from '../plans/allowance-keys';
import type { PlanCatalog, Plan } from '../plans/plan-catalog';
import { countsUsage, launchNoticeCauses, lowBalanceNotice, planAllows, quotaVerdict } from '../plans/plan-launch-guard';
import { calendarMonth, type Period } from '../plans/periods';
import { usageQuery, type Usage } from '../plans/quotas.service';
import type { Environment } from '../pricing/environment';
import { holdFor } from '../pricing/charges';
import { priceEnvironment, type Price } from '../pricing/pricing';
import { environmentDigest, withoutDigest } from '../pricing/spec-digest';
import type { RateCardVersion } from '../pricing/rate-card';
import { dueAlerts, limitsInScopeJson, passesLimit, spendQuery, type LimitRow, type Spend } from '../spend-limits/spend-limits.service';
import type { ReservationRequest } from './dto/reservation.dto';
import type { RuntimeRow } from './runtime-row';

/**
 * Reservations group-committed: the in-memory half of a batch of launches (ReservationsService
 * runs the lanes and the transaction). A batch reads, under its wallets' locks, every account, the
 * runtimes and the spend limits of its launches (launchReadCall), then what the checks of those
 * accounts count (needsReadCall: the period's usage, the spend of each limit's scope, the alerts
 * and notices already sent, whether the period's allowance is granted). Each account's launches are
 * then decided in arrival order by AccountLaunches, which runs the same checks as a launch on its
 * own (the same functions), on counts it keeps current as launches pass. What a batch does not do
 * itself — grant a period's allowance, send a notice, an account without a wallet — it leaves to a
 * launch on its own: the account's launches are taken out of the batch and run one at a time after it.
 */

/** A runtime already known (reserved, or made known by its events first) and its account; no row: unknown. */
const KNOWN_RUNTIME = `SELECT r.account_id AS runtime_account, r.reservation_id IS NOT NULL AS reserved FROM runtimes r WHERE r.runtime_id = $1`;

/** What a launch reads with its wallet's lock: the account, whether its runtime is known, the spend limits in scope. */
export interface LaunchRow extends PlanAccountRow {
  reserved: boolean;
  runtime_account: string | null;
  spend_limits: LimitRow[];
}

const LAUNCH_READ_BATCH: PreparedStatement = {
  name: 'launch_read_batch_v3',
  // Each row looked up by key: LATERAL … LIMIT 1 keeps the planner from turning the lookups into
  // joins, which its generic plan ran as hash joins over every account and every runtime.
  text: `SELECT q.runtime_id AS launch_runtime, ${PLAN_ACCOUNT_COLUMNS}, coalesce(k.reserved, false) AS reserved, k.runtime_account,
      ${limitsInScopeJson('q.account_id', 'q.user_id')} AS spend_limits
    FROM jsonb_to_recordset($1::jsonb) AS q(runtime_id text, account_id text, user_id text)
    LEFT JOIN LATERAL (SELECT ${PLAN_ACCOUNT_COLUMNS} FROM accounts a WHERE a.id = q.account_id LIMIT 1) a ON true
    LEFT JOIN LATERAL (${KNOWN_RUNTIME.replace('$1', 'q.runtime_id')} LIMIT 1) k ON true`,
};

/** The launch rows of a batch's requests (after its wallets' lock); launchRows maps them back. */
export function launchReadCall(requests: readonly ReservationRequest[]): Call {
  const asked = requests.map((r) => ({ runtime_id: r.runtimeId, account_id: r.accountId, user_id: r.userId ?? '' }));
  return { statement: LAUNCH_READ_BATCH, values: [JSON.stringify(asked)] };
}

export function launchRows(found: unknown[]): Map<string, LaunchRow> {
  return new Map((found as (LaunchRow & { launch_runtime: string })[]).map((r) => [r.launch_runtime, r]));
}

/** What the checks of one account's launches count, for needsReadCall. */
interface Needs {
  account: string;
  from: string;
  to: string;
  allowance: string | null;
  usage: boolean;
  agents: string[];
  month_from: string;
  month_to: string;
  scopes: string[];
  limits: string[];
  causes: string[];
}

interface NeedsRow {
  account: string;
  allowance_granted: boolean;
  runs: number;
  agents: number;
  agents_seen: string[];
  active: number;
  spend: { user: string; charged: string; held: string }[];
  alerts: { limitId: string; kind: string; threshold: number }[];
  sent: string[];
}

const NEEDS_READ: PreparedStatement = {
  name: 'launch_needs_read_v1',
  text: `SELECT n.account,
      (n.allowance IS NULL OR EXISTS (SELECT 1 FROM grants g WHERE g.id = n.allowance)) AS allowance_granted,
      u.runs, u.agents, u.agents_seen, u.active,
      (SELECT coalesce(json_agg(json_build_object('user', s.scope, 'charged', sp.charged, 'held', sp.held)), '[]'::json)
         FROM jsonb_array_elements_text(n.scopes) AS s(scope),
         LATERAL (${spendQuery({ account: 'n.account', user: "nullif(s.scope, '')", from: 'n.month_from', to: 'n.month_to' })}) sp) AS spend,
      (SELECT coalesce(json_agg(json_build_object('limitId', al.limit_id, 'kind', al.kind, 'threshold', al.threshold)), '[]'::json)
         FROM spend_limit_alerts al WHERE al.limit_id IN (SELECT jsonb_array_elements_text(n.limits)) AND al.period_start = n.month_from) AS alerts,
      ARRAY(SELECT c.cause FROM notifications_sent c WHERE c.cause IN (SELECT jsonb_array_elements_text(n.causes))) AS sent
    FROM jsonb_to_recordset($1::jsonb) AS n(account text, "from" timestamptz, "to" timestamptz, allowance text, usage boolean,
      agents text[], month_from timestamptz, month_to timestamptz, scopes jsonb, limits jsonb, causes jsonb)
    LEFT JOIN LATERAL (${usageQuery({ account: 'n.account', from: 'n."from"', to: 'n."to"', except: "''", asked: 'n.agents' })} WHERE n.usage) u ON true`,
};

/** The counts a batch's accounts need (none: no statement). */
export function needsReadCall(accounts: readonly AccountLaunches[]): Call | null {
  const needs = accounts.map((a) => a.needs()).filter((n): n is Needs => n !== null);
  return needs.length > 0 ? { statement: NEEDS_READ, values: [JSON.stringify(needs)] } : null;
}

export function needsRows(found: unknown[]): Map<string, NeedsRow> {
  return new Map((found as NeedsRow[]).map((r) => [r.account, r]));
}

const RESERVE_RUNTIMES: PreparedStatement = {
  name: 'reserve_runtimes_v2',
  text: `WITH reserved AS (INSERT INTO runtimes (runtime_id, account_id, reservation_id, user_id, agent_id, variant, environment, size_class,
      spec_digest, rate_per_hour, rate_card_version, reserved_minutes, reserved_amount, hold_id, request_fingerprint, status,
      start_deadline, created_at)
    SELECT q.runtime_id, q.account_id, q.reservation_id, q.user_id, q.agent_id, q.variant, q.environment, q.size_class,
      q.spec_digest, q.rate_per_hour, q.rate_card_version, q.reserved_minutes, q.reserved_amount, q.hold_id, q.request_fingerprint, 'reserved',
      q.start_deadline, q.created_at
    FROM jsonb_to_recordset($1::jsonb) AS q(runtime_id text, account_id text, reservation_id text, user_id text, agent_id text,
      variant text, environment jsonb, size_class text, spec_digest text, rate_per_hour bigint, rate_card_version text, reserved_minutes int,
      reserved_amount bigint, hold_id text, request_fingerprint text, start_deadline timestamptz, created_at timestamptz)
    ON CONFLICT (runtime_id) DO UPDATE SET
      reservation_id = EXCLUDED.reservation_id, user_id = EXCLUDED.user_id, agent_id = EXCLUDED.agent_id,
      variant = EXCLUDED.variant, environment = EXCLUDED.environment, size_class = EXCLUDED.size_class, spec_digest = EXCLUDED.spec_digest,
      rate_per_hour = EXCLUDED.rate_per_hour, rate_card_version = EXCLUDED.rate_card_version,
      reserved_minutes = EXCLUDED.reserved_minutes, reserved_amount = EXCLUDED.reserved_amount,
      hold_id = EXCLUDED.hold_id, request_fingerprint = EXCLUDED.request_fingerprint, start_deadline = EXCLUDED.start_deadline
    WHERE runtimes.reservation_id IS NULL AND runtimes.account_id = EXCLUDED.account_id
    RETURNING *)
    SELECT r.* FROM (SELECT ledger_assert((SELECT count(*) FROM reserved) = jsonb_array_length($1::jsonb),
        'reservations refused: a runtime of the batch was reserved meanwhile')) AS checked(ok)
      JOIN reserved r ON checked.ok`,
};

/** A reservation's runtime row, as RESERVE_RUNTIMES inserts it (attached to the row of a runtime whose events came first). */
export type RuntimeInsert = Record<string, unknown> & { runtime_id: string };

/** Every runtime row of a batch in one statement; a runtime reserved meanwhile fails it (and so the batch). */
export function reserveRuntimesCall(inserts: readonly RuntimeInsert[]): Call {
  return { statement: RESERVE_RUNTIMES, values: [JSON.stringify(inserts)] };
}

/** A runtime's reservation is given this long to start before its hold is voided. */
export const START_WINDOW_MS = 15 * 60_000;

/** The hold of a reservation (the time reservation, deducted up front). */
export function reservationHold(request: ReservationRequest, price: Price, amount: bigint, actor: string, correlationId?: string | null): CreateHoldInput {
  const { holdId, idempotencyKey } = holdKeys(request.runtimeId);
  const environment = request.environment as Environment;
  return {
    accountId: request.accountId,
    holdId,
    amount,
    // Metering's sweeper voids a hold whose runtime never started; the hold itself does not expire.
    expiresAt: null,
    reference: request.runtimeId,
    idempotencyKey,
    actor,
    correlationId,
    reason: `reservation of runtime ${request.runtimeId}: ${request.minutes} minutes of ${request.variant} ${environment.sizeClass} at ${formatCredits(price.ratePerHourMicros)}/h (rate card ${price.rateCardVersion})`,
  };
}

/** The runtime row of a reservation: the rate and rate-card version it was priced with, the spec digest of its environment, its hold, its start deadline. */
export function runtimeInsert(request: ReservationRequest, price: Price, amount: bigint, requestFingerprint: string, now: Date): RuntimeInsert {
  const environment = request.environment as Environment;
  return {
    runtime_id: request.runtimeId,
    account_id: request.accountId,
    reservation_id: `res_${request.runtimeId}`,
    user_id: request.userId ?? null,
    agent_id: request.agentId ?? null,
    variant: request.variant,
    environment: withoutDigest(environment),
    size_class: environment.sizeClass,
    spec_digest: environmentDigest(environment),
    rate_per_hour: price.ratePerHourMicros.toString(),
    rate_card_version: price.rateCardVersion,
    reserved_minutes: request.minutes,
    reserved_amount: amount.toString(),
    hold_id: holdKeys(request.runtimeId).holdId,
    request_fingerprint: requestFingerprint,
    start_deadline: new Date(now.getTime() + START_WINDOW_MS).toISOString(),
    created_at: now.toISOString(),
  };
}

/** A launch decided in a batch: reserved (its hold's answer after commit), reserved already, or refused. */
export type LaunchOutcome =
  | { reserved: { insert: RuntimeInsert; hold: () => HoldResult; runsRemaining: number | null } }
  | { replay: true }
  | { refused: unknown };

/** What a launch needs besides its request, for the hold and the runtime row. */
export interface LaunchInput {
  request: ReservationRequest;
  fingerprint: string;
  actor: string;
  /** The correlation of the launch's request (the batch runs outside it). */
  correlation?: Correlation;
  abandoned?: () => boolean;
  now: Date;
  rateCard: RateCardVersion;
}

/**
 * One account's launches in a batch: its terms, what it counts, and the launches decided in arrival
 * order on counts kept current. `fallback` is set once the account's launches must run on their own.
 */
export class AccountLaunches {
  private usage: (Usage & { seen: Set<string> }) | null = null;
  private readonly spend = new Map<string, Spend>();
  private readonly alertsSent = new Set<string>();
  private readonly sent = new Set<string>();
  /** Why the account's launches leave the batch (null: they stay). */
  fallback: string | null = null;

  private constructor(
    readonly account: PlanAccount,
    private readonly plan: Plan,
    private readonly period: Period,
    private readonly month: Period,
    private readonly launches: readonly { request: ReservationRequest; row: LaunchRow }[],
  ) {}

  /** null when the account's launches cannot be decided in a batch (no account, no wallet: the launch on its own answers). */
  static of(catalog: PlanCatalog, rows: readonly { request: ReservationRequest; row: LaunchRow | undefined }[], hasWallet: boolean, now: Date): AccountLaunches | null {
    const first = rows[0]?.row;
    const account = planAccountOf(first);
    if (!account || !hasWallet) return null;
    const { plan, period } = termsOf(catalog, account, now);
    return new AccountLaunches(account, plan, period, calendarMonth(now), rows as { request: ReservationRequest; row: LaunchRow }[]);
  }

  /**
   * What the account's checks count, null when nothing (no allowance granted here, no quota, no
   * spend limit): the notices already sent are then not read, and any notice sends the launches on
   * their own.
   */
  needs(): Needs | null {
    const limits = this.launches.flatMap((l) => l.row.spend_limits.filter((s) => s.limit_micros !== null));
    const allowance = grantsAllowanceHere(this.plan) ? allowanceGrantId(this.account.id, this.period) : null;
    const usage = countsUsage(this.plan);
    if (allowance === null && !usage && limits.length === 0) return null;
    return {
      account: this.account.id,
      from: this.period.start.toISOString(),
      to: this.period.end.toISOString(),
      allowance,
      usage,
      agents: [...new Set(this.launches.map((l) => l.request.agentId).filter((a): a is string => !!a))],
      month_from: this.month.start.toISOString(),
      month_to: this.month.end.toISOString(),
      scopes: [...new Set(limits.map((l) => l.scope_user_id))],
      limits: [...new Set(limits.map((l) => l.id))],
      causes: launchNoticeCauses(this.account.id, this.period),
    };
  }

  /** Takes the counts needsReadCall found for the account. */
  counted(row: NeedsRow): void {
    if (!row.allowance_granted) this.fallback = 'its allowance for the period is not granted yet';
    if (countsUsage(this.plan)) this.usage = { runs: row.runs, agents: row.agents, agentSeen: false, active: row.active, seen: new Set(row.agents_seen) };
    for (const s of row.spend) this.spend.set(s.user, { charged: BigInt(s.charged), held: BigInt(s.held) });
    for (const a of row.alerts) this.alertsSent.add(`${a.limitId}:${a.kind}:${a.threshold}`);
    for (const c of row.sent) this.sent.add(c);
  }

  /**
   * The account's launches, decided one after the other as a launch on its own decides (the
   * contract's order: reserved already → account active → plan → quotas → spend limit → credits),
   * each hold decided on the wallet's state with the earlier ones applied (`ledger`).
   */
  decide(inputs: readonly LaunchInput[], ledger: LedgerBatch): LaunchOutcome[] {
    const outcomes: LaunchOutcome[] = [];
    for (const [i, input] of inputs.entries()) {
      try {
        const outcome = this.decideOne(input, this.launches[i]!.row, ledger);
        if (this.fallback) return [];
        outcomes.push(outcome);
      } catch (refused) {
        // A refusal changes nothing; anything else (a bug, a state the batch cannot apply) fails the batch.
        if (!(refused instanceof BillingException)) throw refused;
        outcomes.push({ refused });
      }
    }
    return outcomes;
  }

  private decideOne(input: LaunchInput, row: LaunchRow, ledger: LedgerBatch): LaunchOutcome {
    const { request, now } = input;
    if (input.abandoned?.()) throw abandonedLaunch(request.runtimeId);
    if (row.reserved) return { replay: true };
    ownRuntime(request, row.runtime_account);
    activeOnly(this.account);
    const environment = request.environment as Environment;
    planAllows(this.plan, environment);
    const agentId = request.agentId ?? null;
    const usage = this.usage ? { ...this.usage, agentSeen: agentId !== null && this.usage.seen.has(agentId) } : null;
    const { runsRemaining, notices } = quotaVerdict(this.plan, this.period, this.account.id, agentId, usage);
    const price = priceEnvironment(input.rateCard, request.variant, environment);
    const amount = holdFor(price.ratePerHourMicros, request.minutes);
    const userId = request.userId ?? null;
    const limits = row.spend_limits.filter((l) => l.limit_micros !== null);
    for (const limit of limits) passesLimit(limit, this.spendOf(limit), amount, this.month);
    const decided = ledger.decide(request.accountId, createHoldOperation(reservationHold(request, price, amount, input.actor, input.correlation?.id ?? null)), now);
    if ('refused' in decided) throw decided.refused;
    // Passed: it counts now, for the account's next launches.
    if (this.usage) {
      this.usage.runs += 1;
      this.usage.active += 1;
      if (agentId !== null && !this.usage.seen.has(agentId)) {
        this.usage.seen.add(agentId);
        this.usage.agents += 1;
      }
    }
    for (const [scope, spend] of this.spend) if (scope === '' || scope === userId) spend.held += amount;
    // A notice or alert not sent yet is left to the launch on its own (it sends it in its transaction).
    const hold = decided.answer;
    // (The hold's balance is known now; only its transaction id waits for the commit.)
    const low = lowBalanceNotice(this.plan, this.period, this.account.id, hold().balance.available);
    const fresh = [...notices, ...(low ? [low] : [])].filter((n) => !this.sent.has(n.cause));
    const alerts = limits.flatMap((l) => dueAlerts(l, this.spendOf(l).charged + this.spendOf(l).held).map((a) => `${l.id}:${a.kind}:${a.threshold}`));
    if (fresh.length > 0) this.fallback = `it sends ${fresh.map((n) => n.type).join(', ')}`;
    else if (alerts.some((a) => !this.alertsSent.has(a))) this.fallback = 'it crosses a spend-limit threshold';
    const insert = runtimeInsert(request, price, amount, input.fingerprint, now);
    return { reserved: { insert, hold, runsRemaining } };
  }

  private spendOf(limit: LimitRow): Spend {
    const spend = this.spend.get(limit.scope_user_id);
    if (!spend) throw new Error(`the spend of limit ${limit.id} was not read`);
    return spend;
  }
}

/**
 * A runtime known before its reservation (its events came first) belongs to the account its events
 * named: a reservation of it for another account is refused (runtimeId is the reservation's key).
 */
export function ownRuntime(request: ReservationRequest, runtimeAccount: string | null): void {
  if (runtimeAccount === null || runtimeAccount === request.accountId) return;
  throw new BillingException('DL_BILLING_IDEMPOTENCY_CONFLICT', `Runtime ${request.runtimeId} belongs to another account`, [
    { field: 'runtimeId', message: 'is a runtime of another account' },
  ]);
}

/** A launch whose client closed its connection before it was worked on: nothing is reserved. */
export function abandonedLaunch(runtimeId: string): BillingException {
  return new BillingException('DL_BILLING_UNAVAILABLE', `The client closed the connection before runtime ${runtimeId} was reserved: nothing was reserved`);
}

/** A reservation's hold and the hold's idempotency key. */
export function holdKeys(runtimeId: string): { holdId: string; idempotencyKey: string } {
  return { holdId: `hold_${runtimeId}`, idempotencyKey: `reservation:${runtimeId}` };
}

export function activeOnly(account: PlanAccount): PlanAccount {
  if (account.status !== 'active') {
    throw new BillingException('DL_BILLING_ACCOUNT_SUSPENDED', `Account ${account.id} is suspended: no new launches`);
  }
  return account;
}

/** The reservation's runtime row as RESERVE_RUNTIMES returned it, by runtime id. */
export function reservedRows(found: unknown[]): Map<string, RuntimeRow> {
  return new Map((found as RuntimeRow[]).map((r) => [r.runtime_id, r]));
}
