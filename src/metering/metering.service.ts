import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditService, type AuditEntry } from 'src/audit/audit.service';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { withCorrelation } from 'src/common/context/correlation';
import { inOneRoundTrip, type Call, type PreparedStatement } from 'src/common/database/pipelined-transaction';
import { ConcurrentChange, rows } from 'src/common/database/transaction';
import { Clock } from 'src/infra/clock/clock';
import { LedgerService } from 'src/ledger/ledger.service';
import { rollupDelta, usageRollupsCall, type RollupDelta } from 'src/reports/usage-rollups';
import { acknowledgeCommandsCall, openCommandsCall } from 'src/messaging/commands';
import { buildSession, type MeteredEvent, type Session } from './core/sessions';
import type { LifecycleEvent } from './lifecycle-event';
import type { RuntimeRow } from './runtime-row';
import { insertUnreservedRuntimes, updateRuntimesCall, type RebuiltRuntimeRow } from './runtime-writes';
import { parseSessionHistory, sessionHistoryCalls } from './session-history';
import { planSettlement, type SettlementFields } from './settlement-plan';
import { SettlementHooks, type AfterSettlement, type SettledRuntime } from './settlement-hooks';
import { METERING_ACTOR, UnreservedRuntimes } from './unreserved-runtimes';

/** Locks the rebuilt runtimes' rows, in runtime-id order (the first locks of a chunk). */
const LOCK_RUNTIMES_STATEMENT: PreparedStatement = {
  name: 'metering_lock_runtimes_v1',
  text: `SELECT * FROM runtimes WHERE runtime_id = ANY($1::text[]) ORDER BY runtime_id FOR UPDATE`,
};

/** Who, in the audit log, for what metering does on its own (reservations on the fly, terminate commands). */

interface Touched {
  accountId: string;
  /** Events this call applies to the runtime: the new stored ones, then its new heartbeats. */
  count: number;
  /** Seqs of this call's heartbeats (deduplicated by the runtime's highest heartbeat seq, not stored). */
  heartbeatSeqs: Set<number>;
  /** How many of them are new (above the runtime's highest heartbeat seq), and the highest. */
  heartbeats: number;
  heartbeatSeq: number | null;
  lastSeen: Date;
  /** Any event other than a heartbeat: the session must be rebuilt. */
  changesSession: boolean;
  started?: LifecycleEvent;
  /** Ids of this call's events that change the session (a contradiction they bring is flagged once). */
  newIds: Set<string>;
  /** The event this chunk applies for the runtime (its latest that changes the session): the audit rows' correlation. */
  cause: LifecycleEvent;
}

/** Whether `e` rather than `cause` names what a runtime's new events do: a change of session before a heartbeat, then the latest. */
function causesMore(e: LifecycleEvent, cause: LifecycleEvent): boolean {
  const changes = (x: LifecycleEvent): boolean => x.type !== 'runtime.heartbeat';
  if (changes(e) !== changes(cause)) return changes(e);
  return (
    e.occurredAt.getTime() - cause.occurredAt.getTime() > 0 || (e.occurredAt.getTime() === cause.occurredAt.getTime() && e.seq > cause.seq)
  );
}

/** A chunk's runtime rows and rollup deltas, written together at its end. */
interface Pending {
  rows: RebuiltRuntimeRow[];
  deltas: RollupDelta[];
  /** Recorded after every ledger write of the call (the audit chain head is locked last). */
  audits: AuditEntry[];
  /** Runtimes whose open commands their termination (or failed launch) acknowledges: one statement. */
  acknowledged: string[];
  /** The chunk's instant (commands are acknowledged at it). */
  now: Date;
  /** What the settlement hooks asked to run once the rows are written (flush). */
  afterRows: AfterSettlement[];
}

/**
 * Applies new lifecycle events, in the caller's transaction: a runtime's session is rebuilt from the
 * set of its events (so any delivery order gives the same result), then settled, voided or corrected
 * through the ledger. Heartbeat-only runtimes get one multi-row update; the rebuilt runtimes' rows
 * and usage rollups are written together at the end of the chunk.
 */
@Injectable()
export class MeteringService {
  constructor(
    private readonly ledger: LedgerService,
    private readonly audit: AuditService,
    private readonly unreserved: UnreservedRuntimes,
    private readonly clock: Clock,
    private readonly settlementHooks: SettlementHooks,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Applies `events` (new, already stored) and `heartbeats` (not stored: a heartbeat is new when its
   * seq is above the highest heartbeat seq its runtime has applied). `months` gives the runtimes'
   * months as the ingest read them (their events' partition). Returns how many heartbeats were new.
   */
  async apply(
    em: EntityManager,
    events: LifecycleEvent[],
    heartbeats: LifecycleEvent[] = [],
    months: ReadonlyMap<string, string> = new Map(),
  ): Promise<number> {
    if (events.length === 0 && heartbeats.length === 0) return 0;
    const touched = new Map<string, Touched>();
    for (const e of [...events, ...heartbeats]) {
      const t = touched.get(e.runtimeId) ?? {
        accountId: e.accountId,
        count: 0,
        heartbeatSeqs: new Set(),
        heartbeats: 0,
        heartbeatSeq: null,
        lastSeen: e.occurredAt,
        changesSession: false,
        newIds: new Set(),
        cause: e,
      };
      if (causesMore(e, t.cause)) t.cause = e;
      if (e.occurredAt > t.lastSeen) t.lastSeen = e.occurredAt;
      if (e.type === 'runtime.heartbeat') t.heartbeatSeqs.add(e.seq);
      else {
        t.count += 1;
        t.changesSession = true;
        t.newIds.add(e.id);
      }
      if (e.type === 'runtime.started' && (!t.started || e.occurredAt < t.started.occurredAt)) t.started = e;
      touched.set(e.runtimeId, t);
    }
    const ids = [...touched.keys()].sort();
    // Heartbeat-only runtimes (the bulk of the stream): one multi-row update of their last sign of life.
    const quiet = ids.filter((id) => !touched.get(id)!.changesSession);
    const updated = await this.recordSignsOfLife(em, quiet, touched);
    let counted = [...updated.values()].reduce((sum, n) => sum + n, 0);
    // The others are rebuilt. Lock order: runtime rows (sorted) first, then the ledger's wallet, grants and holds.
    const rebuild = ids.filter((id) => !updated.has(id));
    if (rebuild.length === 0) return counted;
    // One round trip: the row locks, then (under them) the runtimes' stored events and open commands.
    const [locked = [], ...read] = await inOneRoundTrip(em, [
      { statement: LOCK_RUNTIMES_STATEMENT, values: [rebuild] },
      ...sessionHistoryCalls(rebuild.map((id) => ({ id, month: months.get(id) }))),
      openCommandsCall(rebuild),
    ]);
    const open = read.pop() ?? [];
    const found = read.flat();
    const byId = new Map((locked as unknown as RuntimeRow[]).map((r) => [r.runtime_id, r]));
    // Reserved by another account since the ingest checked it (heartbeats make no row): the retry refuses the event.
    const taken = rebuild.filter((id) => byId.has(id) && byId.get(id)!.account_id !== touched.get(id)!.accountId);
    if (taken.length > 0) {
      throw new ConcurrentChange(`runtime ${taken.join(', ')} was reserved meanwhile by another account: the chunk is retried`);
    }
    for (const id of rebuild) counted += countHeartbeats(touched.get(id)!, byId.get(id)?.heartbeat_seq ?? null);

    const history = parseSessionHistory(found);
    const commanded = new Set(open.map((f) => f.runtime_id as string));
    const now = this.clock.now();
    const pending: Pending = { rows: [], deltas: [], audits: [], acknowledged: [], now, afterRows: [] };
    const rebuilt: Rebuilt[] = [];
    await this.insertMissing(em, rebuild, byId, touched);
    for (const id of rebuild) {
      const t = touched.get(id)!;
      const row = byId.get(id)!;
      const events = history.get(id) ?? [];
      rebuilt.push({ row, t, events, session: buildSession(events) });
    }
    // Runtimes that run without a usable reservation are reserved on the fly (or told to terminate)
    // after the others are settled and written, so that admission counts them as they now are.
    const unreserved = rebuilt.filter((r) => runsUnreserved(r.row, r.session));
    const settledFirst = rebuilt.filter((r) => !runsUnreserved(r.row, r.session));
    await this.settle(
      em,
      settledFirst,
      commanded,
      pending,
      unreserved.map((r) => r.row.account_id),
    );
    for (const r of unreserved) {
      await this.flush(em, pending);
      await withCorrelation({ id: r.t.cause.id, kind: 'event' }, async () => {
        if (!r.row.hold_id) r.current = await this.unreserved.reserve(em, r, commanded.has(r.row.runtime_id), now);
        else await this.unreserved.terminate(em, r.row, now);
        if ((await this.withOpenCommands(em, [r.row.runtime_id])).size > 0) commanded.add(r.row.runtime_id);
        else commanded.delete(r.row.runtime_id);
      });
      await this.settle(em, [r], commanded, pending);
    }
    await this.flush(em, pending);
    if (pending.audits.length > 0) await this.audit.recordMany(em, pending.audits);
    return counted;
  }

  /**
   * Settles rebuilt runtimes as one ledger batch: each one's session decided in memory
   * (planSettlement), every wallet involved locked once in account-id order (with those of
   * `alsoLock`), read once, and every settlement and correction written at once with its audit rows;
   * then the settlement hooks, and the runtimes' rows and rollups queued for the chunk's flush.
   */
  private async settle(
    em: EntityManager,
    rebuilt: Rebuilt[],
    commanded: Set<string>,
    pending: Pending,
    alsoLock: string[] = [],
  ): Promise<void> {
    const now = pending.now;
    const plans = rebuilt.map((r) =>
      // What a runtime's events cause (a settlement, a correction, a flag) is audited under the event's id.
      withCorrelation({ id: r.t.cause.id, kind: 'event' }, () => {
        this.flagContradiction(r.row, r.session, r.events, r.t, now, pending);
        const current = r.current ?? r.row;
        return planSettlement(current, r.session, { now, commanded: commanded.has(current.runtime_id), count: r.t.count });
      }),
    );
    const steps = plans.flatMap((p) => (p.ledger ? [{ step: p.ledger, fields: p.fields }] : []));
    // A hook may write to the ledger: its wallet is locked with the others, in the same order.
    const hooked = rebuilt.map((r, i) => {
      const settled = plans[i]!.settled && settledOf(r, plans[i]!.settled!.first);
      return settled && this.settlementHooks.wanted(settled) ? settled : null;
    });
    const hookedAccounts = hooked.flatMap((h) => (h ? [h.accountId] : []));
    // Dated by the chunk's instant, as its runtime rows and usage rollups: one month for all three.
    const answers = await this.ledger.runBatch(
      em,
      steps.map((s) => s.step),
      [...alsoLock, ...hookedAccounts],
      now,
    );
    steps.forEach(({ step, fields }, i) => step.apply(answers[i], fields));
    for (const [i, r] of rebuilt.entries()) {
      const plan = plans[i]!;
      if (plan.acknowledges) pending.acknowledged.push(r.row.runtime_id);
      // Paused memory is metered from the same session, recorded with the settlement and corrected with it.
      const settled = hooked[i];
      if (settled) {
        const after = await withCorrelation({ id: r.t.cause.id, kind: 'event' }, () => this.settlementHooks.settled(em, settled));
        pending.afterRows.push(...after.map((then) => () => withCorrelation({ id: r.t.cause.id, kind: 'event' }, then)));
      }
      this.record(r, plan.fields, pending);
    }
  }

  /**
   * A launch failure that the runtime's run contradicts is kept for review: an audit row, once (when
   * this call's events made the contradiction appear), and the reservation view lists it.
   */
  private flagContradiction(row: RuntimeRow, session: Session, events: MeteredEvent[], t: Touched, now: Date, pending: Pending): void {
    const flagged = session.contradictedLaunchFailure;
    if (!flagged) return;
    if (buildSession(events.filter((e) => !t.newIds.has(e.id))).contradictedLaunchFailure) return;
    pending.audits.push({
      actor: METERING_ACTOR,
      action: 'runtime.launch_failed_contradicted',
      accountId: row.account_id,
      after: {
        runtimeId: row.runtime_id,
        eventId: flagged.eventId,
        occurredAt: flagged.at.toISOString(),
        reason: flagged.reason,
        runningSeconds: session.closedMs / 1000,
        review: 'launch failure reported for a runtime that ran: not voided, the charge stands',
      },
      at: now,
      // The event that made the contradiction appear, as the charge's own audit row carries it.
      correlationId: t.cause.id,
    });
  }

  /** Which of these runtimes have a terminate command not yet acknowledged. */
  private async withOpenCommands(em: EntityManager, ids: string[]): Promise<Set<string>> {
    const [found = []] = await inOneRoundTrip(em, [openCommandsCall(ids)]);
    return new Set(found.map((f) => f.runtime_id as string));
  }

  /**
   * Writes the chunk's runtime rows in one statement, moves the usage rollups by their charges and
   * acknowledges the commands its terminations answer: the three statements in one round trip.
   */
  private async flush(em: EntityManager, pending: Pending): Promise<void> {
    const calls: Call[] = [];
    const rollups = usageRollupsCall(pending.deltas.splice(0));
    if (rollups) calls.push(rollups);
    const acknowledged = pending.acknowledged.splice(0);
    if (acknowledged.length > 0) calls.push(acknowledgeCommandsCall(acknowledged, pending.now));
    const list = pending.rows.splice(0);
    if (list.length > 0) calls.push(updateRuntimesCall(list));
    if (calls.length > 0) await inOneRoundTrip(em, calls);
    for (const then of pending.afterRows.splice(0)) await then();
  }

  /**
   * Runtimes with heartbeats only: one statement moves their last sign of life (whatever the seq: it
   * only moves forward) and counts the heartbeats above each one's highest heartbeat seq, read under
   * the row lock. Returns the runtimes it updated with their new heartbeats; a heartbeat of an
   * unknown runtime is left to the rebuild.
   */
  private async recordSignsOfLife(em: EntityManager, ids: string[], touched: Map<string, Touched>): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    // One JSON array of rows (each runtime's id, last sign of life in epoch milliseconds and heartbeat
    // seqs): the array parameters it replaced were quoted element by element by the driver.
    const updated = await rows<{ runtime_id: string; fresh: number }>(
      em,
      `WITH u AS MATERIALIZED (SELECT id, account, to_timestamp(seen_ms / 1000) AS seen, seqs
           FROM json_to_recordset($1::json) AS u(id text, account text, seen_ms float8, seqs bigint[])),
         old AS (SELECT r.runtime_id, r.account_id, r.heartbeat_seq FROM runtimes r WHERE r.runtime_id = ANY(ARRAY(SELECT id FROM u)) ORDER BY r.runtime_id FOR UPDATE),
         c AS (SELECT u.id, u.seen, s.fresh, s.top FROM u JOIN old ON old.runtime_id = u.id AND old.account_id = u.account,
           LATERAL (SELECT count(*) FILTER (WHERE seq > coalesce(old.heartbeat_seq, -1))::int AS fresh, max(seq) AS top FROM unnest(u.seqs) seq) s)
       UPDATE runtimes r SET last_seen_at = GREATEST(r.last_seen_at, c.seen), heartbeats = r.heartbeats + c.fresh, events_count = r.events_count + c.fresh,
         heartbeat_seq = GREATEST(r.heartbeat_seq, c.top), updated_at = now()
       FROM c WHERE r.runtime_id = c.id
       RETURNING r.runtime_id, c.fresh`,
      [
        JSON.stringify(
          ids.map((id) => {
            const t = touched.get(id)!;
            return { id, account: t.accountId, seen_ms: t.lastSeen.getTime(), seqs: [...t.heartbeatSeqs] };
          }),
        ),
      ],
    );
    return new Map(updated.map((u) => [u.runtime_id, u.fresh]));
  }

  /**
   * Rows for rebuilt runtimes that have none: seen only through heartbeats (the ingest creates the
   * rows of runtimes whose events it stores). One created meanwhile by a reservation was not locked
   * with the others: the chunk fails, and its retry locks it.
   */
  private async insertMissing(
    em: EntityManager,
    rebuild: string[],
    byId: Map<string, RuntimeRow>,
    touched: Map<string, Touched>,
  ): Promise<void> {
    const missing = rebuild.filter((id) => !byId.has(id));
    if (missing.length === 0) return;
    const created = await insertUnreservedRuntimes(
      em,
      missing.map((id) => ({ id, account: touched.get(id)!.accountId })),
    );
    for (const row of created) byId.set(row.runtime_id, row);
    const meanwhile = missing.filter((id) => !byId.has(id));
    if (meanwhile.length > 0) throw new ConcurrentChange(`runtime ${meanwhile.join(', ')} was created meanwhile: the chunk is retried`);
  }

  /** Queues a settled (or rebuilt) runtime's row and its rollup delta for the chunk's flush. */
  private record(r: Rebuilt, fields: SettlementFields, pending: Pending): void {
    const { row, session, t } = r;
    const current = r.current ?? row;
    const open = session.intervals.find((i) => i.to === null);
    // A forced settlement closed the run at its charged end: later events other than a termination
    // or a launch failure (which rebuild the charge) do not reopen it.
    const frozen =
      fields.status === 'settled' && (current.settlement ?? '').startsWith('forced_') && fields.settlement === current.settlement;
    const closedMs = frozen ? Number(current.closed_ms) : session.closedMs;
    // The usage rollups move by this charge's difference, in this transaction (reports read them).
    pending.deltas.push(
      ...rollupDelta(
        row,
        { ...current, status: fields.status, closed_ms: closedMs, charged: fields.charged, settled_at: fields.settledAt },
        pending.now,
      ),
    );
    pending.rows.push({
      runtimeId: current.runtime_id,
      status: fields.status,
      startedAt: session.startedAt,
      closedMs,
      openSince: frozen ? null : (open?.from ?? null),
      lastSeen: maxDate(session.lastSeenAt, t.lastSeen),
      terminatedAt: frozen ? current.terminated_at : session.terminatedAt,
      terminationReason: session.terminationReason,
      charged: fields.charged,
      released: fields.released,
      settlement: fields.settlement,
      settledAt: fields.settledAt,
      count: t.count,
      heartbeats: t.heartbeats,
      heartbeatSeq: t.heartbeatSeq,
    });
  }
}

/** Counts a rebuilt runtime's new heartbeats (above `highest`, read under its row lock) into `t`; returns how many. */
function countHeartbeats(t: Touched, highest: string | null): number {
  const above = highest === null ? -1 : Number(highest);
  const seqs = [...t.heartbeatSeqs];
  t.heartbeats = seqs.filter((s) => s > above).length;
  t.heartbeatSeq = seqs.length > 0 ? Math.max(...seqs) : null;
  t.count += t.heartbeats;
  return t.heartbeats;
}

function maxDate(a: Date | null, b: Date): Date {
  return a && a > b ? a : b;
}

/** A rebuilt runtime: its locked row (and the row once reserved on the fly), this call's events for it, its stored events and session. */
interface Rebuilt {
  row: RuntimeRow;
  current?: RuntimeRow;
  t: Touched;
  events: MeteredEvent[];
  session: Session;
}

/**
 * Whether a runtime runs (or sends events) without a usable reservation: it is reserved on the fly,
 * or told to terminate. One that started and terminated without ever having a hold (its events in
 * one batch, or its start late) is reserved on the fly too, so that its charge does not depend on
 * the order its events came in.
 */
function runsUnreserved(row: RuntimeRow, session: Session): boolean {
  const active = session.status === 'running' || session.status === 'paused' || (!row.hold_id && session.status === 'reserved');
  const ranWithoutHold = !row.hold_id && session.status === 'terminated' && session.startedAt !== null;
  return (active && (!row.hold_id || row.status === 'voided')) || ranWithoutHold;
}

function settledOf(r: Rebuilt, first: boolean): SettledRuntime {
  const current = r.current ?? r.row;
  return {
    runtimeId: current.runtime_id,
    accountId: current.account_id,
    sizeClass: current.size_class,
    rateCardVersion: current.rate_card_version,
    terminatedAt: r.session.terminatedAt!,
    pausedIntervals: r.session.pausedIntervals,
    pausedMs: r.session.pausedMs,
    first,
  };
}
