import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { advisoryKey } from 'src/common/database/advisory-lock';
import { inTransaction, rows } from 'src/common/database/transaction';
import { Clock } from 'src/infra/clock/clock';
import { MembersService } from 'src/members/members.service';
import type { SeatHistoryHook } from 'src/members/seat-history-hooks';
import { planPushes, seatJumps } from './seat-dates';
import { SubscriptionsService, isLive } from './subscriptions.service';

export interface SeatPushRow {
  id: string;
  account_id: string;
  subscription_id: string;
  item_id: string;
  quantity: number;
  from_quantity: number;
  proration_date: Date;
  idempotency_key: string;
  source: 'sync' | 'reconcile';
}

/** The seat-plan lock: held shared by membership transactions, alone by the planner (never across a Stripe call). */
const planLock = (accountId: string): string => advisoryKey(`seat-plan:${accountId}`);

const unix = (d: Date): number => Math.floor(d.getTime() / 1000);

/**
 * SEAT_HISTORY_HOOKS, in the membership transaction (holding the account's seat-plan lock shared):
 * records what the changes did to the active members over time, as stripe_seat_changes. A plain
 * function: the members module calls it, so it cannot depend on that module's service.
 */
export const seatChangesHook: SeatHistoryHook = async (em, changed) => {
  for (const account of [...changed].sort((a, b) => a.accountId.localeCompare(b.accountId))) {
    await em.query(`SELECT pg_advisory_xact_lock_shared($1)`, [planLock(account.accountId)]);
    const history = await account.historyOf([...new Set(account.changes.map((c) => c.userId))]);
    const jumps = seatJumps(history, new Set(account.changes.map((c) => c.id)));
    if (jumps.length === 0) continue;
    await em.query(
      `INSERT INTO stripe_seat_changes (account_id, change_id, effective_at, delta)
       SELECT $1, change_id, effective_at, delta FROM unnest($2::text[], $3::timestamptz[], $4::int[]) AS j(change_id, effective_at, delta)`,
      [account.accountId, jumps.map((j) => j.changeId), jumps.map((j) => j.at), jumps.map((j) => j.delta)],
    );
  }
};

/**
 * Plans the seat pushes of an account from its membership changes, each dated at its change (see
 * seat-dates.ts). Owns the writes of stripe_seat_changes and stripe_seat_pushes.
 *
 * The membership transaction records what its changes did to the active members over time
 * (SEAT_HISTORY_HOOKS), holding the account's seat-plan lock shared; the planner holds it alone, so
 * it reads the active members and the changes not planned yet as of one state, and plans pushes from
 * the quantity the pushes planned before leave: `seats:<item>:<quantity>:<proration date>:<push id>`.
 * A planned push is sent as planned (SeatsService), whenever it is retried.
 */
@Injectable()
export class SeatPushes {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly members: MembersService,
    private readonly subscriptions: SubscriptionsService,
    private readonly clock: Clock,
  ) {}

  /**
   * Plans pushes for the changes not planned yet (none without a live subscription with a seat item:
   * they wait for one, and are then dated from its period start at the earliest). The first push to a
   * seat item also sets the members active at its period start, when the quantity recorded differs
   * (a subscription started through Checkout with another quantity).
   */
  async plan(accountId: string): Promise<void> {
    await inTransaction(this.ds, async (em) => {
      await em.query(`SELECT pg_advisory_xact_lock($1)`, [planLock(accountId)]);
      const sub = await this.subscriptions.row(em, { accountId });
      if (!sub || !isLive(sub.status) || !sub.seat_item_id) return;
      const unplanned = await rows<{ id: string; effective_at: Date; delta: number }>(
        em,
        `SELECT id, effective_at, delta FROM stripe_seat_changes WHERE account_id = $1 AND planned_at IS NULL ORDER BY effective_at, id`,
        [accountId],
      );
      const [pushedBefore] = await rows(em, `SELECT 1 FROM stripe_seat_pushes WHERE item_id = $1 LIMIT 1`, [sub.seat_item_id]);
      if (unplanned.length === 0 && pushedBefore) return;
      const seats = await this.members.activeSeats(em, accountId);
      const start = Math.max(0, seats - unplanned.reduce((sum, j) => sum + j.delta, 0));
      const now = this.clock.now();
      const planned = planPushes(
        start,
        unplanned.map((j) => ({ at: j.effective_at, delta: j.delta })),
        sub.current_period_start,
        now,
      );
      if (!pushedBefore) {
        const from = new Date(unix(sub.current_period_start && sub.current_period_start < now ? sub.current_period_start : now) * 1000);
        // The first push is absolute: when it is dated at the period start already, it says the rest.
        if (planned[0] && planned[0].date <= from) planned[0] = { ...planned[0], fromQuantity: sub.seat_quantity };
        else if (start !== sub.seat_quantity) planned.unshift({ quantity: start, fromQuantity: sub.seat_quantity, date: from });
      }
      for (const p of planned) await this.insert(em, { ...sub, seat_item_id: sub.seat_item_id }, p, 'sync');
      await em.query(`UPDATE stripe_seat_changes SET planned_at = $2 WHERE id = ANY($1)`, [unplanned.map((j) => j.id), now]);
    });
  }

  /** Pushes not sent yet, in the order planned. */
  pending(em: EntityManager, accountId: string): Promise<SeatPushRow[]> {
    return rows<SeatPushRow>(
      em,
      `SELECT * FROM stripe_seat_pushes WHERE account_id = $1 AND sent_at IS NULL AND dropped_at IS NULL ORDER BY id`,
      [accountId],
    );
  }

  /** The last push sent to this seat item. */
  async lastSent(em: EntityManager, itemId: string): Promise<SeatPushRow | null> {
    const [last] = await rows<SeatPushRow>(
      em,
      `SELECT * FROM stripe_seat_pushes WHERE item_id = $1 AND sent_at IS NOT NULL ORDER BY id DESC LIMIT 1`,
      [itemId],
    );
    return last ?? null;
  }

  /** The changes not planned yet (the members active now count them): their net seats, and which they are (count, newest id). */
  async unplanned(em: EntityManager, accountId: string): Promise<{ delta: number; which: string }> {
    const [row] = await rows<{ delta: number; which: string }>(
      em,
      `SELECT coalesce(sum(delta), 0)::int AS delta, count(*) || ':' || coalesce(max(id), 0) AS which
       FROM stripe_seat_changes WHERE account_id = $1 AND planned_at IS NULL`,
      [accountId],
    );
    return row ?? { delta: 0, which: '' };
  }

  async insert(
    em: EntityManager,
    sub: { account_id: string; subscription_id: string; seat_item_id: string },
    p: { quantity: number; fromQuantity: number; date: Date },
    source: 'sync' | 'reconcile',
    keyPrefix = 'seats',
  ): Promise<SeatPushRow> {
    // The key ends with the push's own id, taken from the sequence in the same statement.
    const keyStart = `${keyPrefix}:${sub.seat_item_id}:${p.quantity}:${unix(p.date)}:`;
    const [row] = await rows<SeatPushRow>(
      em,
      `WITH next AS (SELECT nextval('stripe_seat_pushes_id_seq') AS id)
       INSERT INTO stripe_seat_pushes (id, account_id, subscription_id, item_id, quantity, from_quantity, proration_date, idempotency_key, source)
       SELECT next.id, $1, $2, $3, $4::int, $5::int, $6::timestamptz, $7::text || next.id, $8 FROM next RETURNING *`,
      [sub.account_id, sub.subscription_id, sub.seat_item_id, p.quantity, p.fromQuantity, p.date, keyStart, source],
    );
    return row!;
  }

  async markSent(em: EntityManager, id: string): Promise<void> {
    await em.query(`UPDATE stripe_seat_pushes SET sent_at = $2 WHERE id = $1`, [id, this.clock.now()]);
  }

  /**
   * A push dated before the subscription's current period (planned before it renewed; Stripe refuses
   * such a date): dated at the period start instead, under a key of its own (the one planned could be
   * answered with the earlier date's result, or refused as used with other parameters).
   */
  async redate(em: EntityManager, push: SeatPushRow, date: Date): Promise<SeatPushRow> {
    const key = `${push.idempotency_key}:from:${unix(date)}`;
    await em.query(`UPDATE stripe_seat_pushes SET proration_date = $2, idempotency_key = $3 WHERE id = $1`, [push.id, date, key]);
    return { ...push, proration_date: date, idempotency_key: key };
  }

  async markDropped(em: EntityManager, id: string): Promise<void> {
    await em.query(`UPDATE stripe_seat_pushes SET dropped_at = $2 WHERE id = $1`, [id, this.clock.now()]);
  }
}
