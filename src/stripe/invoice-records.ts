import type { EntityManager } from 'typeorm';
import type { Clock } from 'src/infra/clock/clock';
import type { MembersService } from 'src/members/members.service';
import type { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import type { InvoiceSnapshot } from './stripe-objects';

/**
 * Keeps the invoice with its lines and total as Stripe invoiced them (the statement's fees), its seat
 * quantity and the seats active when it was created; a mismatch is flagged. A finalized invoice's
 * amounts do not change, so a later event keeps what was recorded unless it was missing.
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
  const active = await deps.members.seatsAt(em, accountId, at);
  await em.query(
    `INSERT INTO stripe_invoices AS i (invoice_id, account_id, subscription_id, status, period_start, period_end, seat_quantity, active_seats, lines, total_cents, currency, paid_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12)
     ON CONFLICT (invoice_id) DO UPDATE SET status = CASE WHEN i.status = 'paid' THEN 'paid' ELSE EXCLUDED.status END,
       paid_at = coalesce(i.paid_at, EXCLUDED.paid_at),
       lines = coalesce(i.lines, EXCLUDED.lines), total_cents = coalesce(i.total_cents, EXCLUDED.total_cents),
       currency = coalesce(i.currency, EXCLUDED.currency), updated_at = now()`,
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
    ],
  );
  if (status === 'paid' && seatLine?.quantity !== undefined && seatLine.quantity !== null && seatLine.quantity !== active) {
    await em.query(
      `INSERT INTO stripe_seat_discrepancies (kind, account_id, subscription_id, invoice_id, stripe_quantity, active_seats, detected_at)
       VALUES ('invoice_seats', $1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
      [accountId, invoice.subscriptionId, invoice.id, seatLine.quantity, active, deps.clock.now()],
    );
  }
}
