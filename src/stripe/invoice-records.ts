import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { advisoryKey } from 'src/common/database/advisory-lock';
import { rows } from 'src/common/database/transaction';
import { Clock } from 'src/infra/clock/clock';
import type { MembersService } from 'src/members/members.service';
import type { SeatHistoryChange, SeatHistoryHook } from 'src/members/seat-history-hooks';
import type { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import type { InvoiceSnapshot } from './stripe-objects';

/**
 * The account's invoice-seats lock: recording an invoice (which reads the seats active when it was
 * created) and rechecking invoices after a late membership change (which reads the invoices recorded)
 * take it, so that neither misses the other's uncommitted work.
 */
async function lockInvoiceSeats(em: EntityManager, accountId: string): Promise<void> {
  await em.query(`SELECT pg_advisory_xact_lock($1)`, [advisoryKey(`invoice-seats:${accountId}`)]);
}

/**
 * Keeps the invoice with its lines and total as Stripe invoiced them (the statement's fees), when it
 * was created, its seat quantity and the seats active when it was created; a mismatch is flagged. A
 * finalized invoice's amounts do not change, so a later event keeps what was recorded unless it was missing.
 */
export async function recordInvoice(
  em: EntityManager,
  deps: { catalog: PlanCatalog; members: MembersService; clock: Clock },
  accountId: string,
  invoice: InvoiceSnapshot,
  status: 'paid' | 'payment_failed',
): Promise<void> {
  const seatLine = invoice.lines.find((l) => deps.catalog.isSeatPrice(l.priceId) && !l.proration);
  const at = invoice.created ?? invoice.periodStart!;
  await lockInvoiceSeats(em, accountId);
  const active = await deps.members.seatsAt(em, accountId, at);
  await em.query(
    `INSERT INTO stripe_invoices AS i (invoice_id, account_id, subscription_id, status, period_start, period_end, seat_quantity, active_seats, lines, total_cents, currency, paid_at, created)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12, $13)
     ON CONFLICT (invoice_id) DO UPDATE SET status = CASE WHEN i.status = 'paid' THEN 'paid' ELSE EXCLUDED.status END,
       paid_at = coalesce(i.paid_at, EXCLUDED.paid_at),
       lines = coalesce(i.lines, EXCLUDED.lines), total_cents = coalesce(i.total_cents, EXCLUDED.total_cents),
       currency = coalesce(i.currency, EXCLUDED.currency), created = coalesce(i.created, EXCLUDED.created),
       active_seats = EXCLUDED.active_seats, updated_at = now()`,
    [
      invoice.id,
      accountId,
      invoice.subscriptionId,
      status,
      invoice.periodStart,
      invoice.periodEnd,
      seatLine?.quantity ?? null,
      active,
      JSON.stringify(invoice.lines),
      invoice.totalCents,
      invoice.currency,
      status === 'paid' ? invoice.paidAt : null,
      invoice.created,
    ],
  );
  if (status === 'paid' && seatLine?.quantity !== undefined && seatLine.quantity !== null && seatLine.quantity !== active) {
    // A flag already there holds again, with the count known now (the same under the lock, unless the
    // row had no `created` before this event).
    await em.query(
      `INSERT INTO stripe_seat_discrepancies (kind, account_id, subscription_id, invoice_id, stripe_quantity, active_seats, detected_at)
       VALUES ('invoice_seats', $1, $2, $3, $4, $5, $6)
       ON CONFLICT (invoice_id) WHERE invoice_id IS NOT NULL DO UPDATE SET active_seats = EXCLUDED.active_seats, resolved_at = NULL, resolved_by = NULL`,
      [accountId, invoice.subscriptionId, invoice.id, seatLine.quantity, active, deps.clock.now()],
    );
  }
}

interface RecordedInvoice {
  invoice_id: string;
  subscription_id: string;
  status: string;
  seat_quantity: number | null;
  active_seats: number;
  created: Date;
}

/**
 * Rechecks the seats of recorded invoices when a membership change dated before their creation is
 * received after them (SEAT_HISTORY_HOOKS, in the membership transaction): `active_seats` becomes the
 * members active when each was created, as the history now says, and a paid invoice's flag follows:
 * raised when it now bills other seats, resolved (`resolved_at`, `resolved_by` = the change) when it
 * now bills the seats active then, opened again when a later change makes it wrong again. Invoices
 * recorded before their creation time was kept (`created` null) are not rechecked.
 */
@Injectable()
export class InvoiceSeats {
  private readonly logger = new Logger('InvoiceSeats');

  constructor(private readonly clock: Clock) {}

  readonly seatHistoryHook: SeatHistoryHook = (em, changed) => this.recheck(em, changed);

  async recheck(em: EntityManager, changed: SeatHistoryChange[]): Promise<void> {
    for (const account of [...changed].sort((a, b) => a.accountId.localeCompare(b.accountId))) {
      await lockInvoiceSeats(em, account.accountId);
      const invoices = await rows<RecordedInvoice>(
        em,
        `SELECT invoice_id, subscription_id, status, seat_quantity, active_seats, created FROM stripe_invoices
         WHERE account_id = $1 AND created >= $2 ORDER BY created, invoice_id`,
        [account.accountId, account.since],
      );
      for (const invoice of invoices) await this.recheckOne(em, account, invoice);
    }
  }

  private async recheckOne(em: EntityManager, account: SeatHistoryChange, invoice: RecordedInvoice): Promise<void> {
    const active = await account.seatsAt(invoice.created);
    if (active !== invoice.active_seats) {
      await em.query(`UPDATE stripe_invoices SET active_seats = $2, updated_at = now() WHERE invoice_id = $1`, [
        invoice.invoice_id,
        active,
      ]);
      this.logger.log(
        `invoice ${invoice.invoice_id}: ${active} seats were active when it was created (recorded ${invoice.active_seats}), after a membership change received later`,
      );
    }
    if (invoice.status !== 'paid' || invoice.seat_quantity === null) return;
    const now = this.clock.now();
    const [flag] = await rows<{ id: string; active_seats: number; resolved_at: Date | null }>(
      em,
      `SELECT id, active_seats, resolved_at FROM stripe_seat_discrepancies WHERE invoice_id = $1 AND kind = 'invoice_seats' FOR UPDATE`,
      [invoice.invoice_id],
    );
    if (invoice.seat_quantity !== active) {
      if (!flag) {
        await em.query(
          `INSERT INTO stripe_seat_discrepancies (kind, account_id, subscription_id, invoice_id, stripe_quantity, active_seats, detected_at)
           VALUES ('invoice_seats', $1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
          [account.accountId, invoice.subscription_id, invoice.invoice_id, invoice.seat_quantity, active, now],
        );
      } else if (flag.resolved_at !== null || flag.active_seats !== active) {
        await em.query(`UPDATE stripe_seat_discrepancies SET active_seats = $2, resolved_at = NULL, resolved_by = NULL WHERE id = $1`, [
          flag.id,
          active,
        ]);
      }
      return;
    }
    if (flag && flag.resolved_at === null) {
      // The change that made it right: the latest of this transaction's dated at or before the creation.
      const cause = account.changes.filter((c) => c.occurredAt.getTime() <= invoice.created.getTime()).at(-1) ?? account.changes[0]!;
      await em.query(`UPDATE stripe_seat_discrepancies SET active_seats = $2, resolved_at = $3, resolved_by = $4 WHERE id = $1`, [
        flag.id,
        active,
        now,
        cause.id,
      ]);
    }
  }
}
