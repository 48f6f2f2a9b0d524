import type { DataSource } from 'typeorm';
import { rows } from 'src/common/database/transaction';
import type { InvoiceLineSnapshot } from 'src/stripe/stripe-objects';

/**
 * The reads a statement is made of: the ledger's entries (through its transactions, never written
 * here), what they were for (runtimes, ancillary charges, grants), the metered ancillary usage and
 * the Team invoices. Every figure of a statement comes from one of these.
 */

/**
 * The balance ledger entries give at `before`: −(issued + consumption + expired), i.e. grants + holds − debt.
 * The months before `before`'s month from their stored changes (ledger_months, a row a month), and the
 * entries of its month before `before` through the account's transactions by time: bounded by a month,
 * not by the account's history (test/integration/history-reads-plan.test.ts).
 */
export async function balanceBefore(ds: DataSource, accountId: string, before: Date): Promise<bigint> {
  const [r] = await rows<{ balance: string }>(
    ds,
    `WITH start AS (SELECT date_trunc('month', $2::timestamptz AT TIME ZONE 'UTC') AS month)
     SELECT (coalesce((SELECT sum(m.balance_change) FROM ledger_months m
                       WHERE m.account_id = $1 AND m.month < (SELECT month::date FROM start)), 0)
       - coalesce((SELECT sum(e.amount) FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
                   WHERE t.account_id = $1 AND t.kind <> '' AND t.created_at >= (SELECT month AT TIME ZONE 'UTC' FROM start)
                     AND t.created_at < $2 AND e.ledger_account IN ('issued', 'consumption', 'expired')), 0))::text AS balance`,
    [accountId, before],
  );
  return BigInt(r?.balance ?? '0');
}

export interface Movement {
  transactionId: string;
  kind: string;
  grantSource: string | null;
  clawback: boolean;
  /** Σ entries on `issued` (negative for credits granted). */
  issued: bigint;
  /** Σ entries on `consumption` (positive for a charge). */
  consumption: bigint;
  /** Σ entries on `expired` (positive for credits that expired). */
  expired: bigint;
  /** Runtime holds: what the runtime ran. */
  runtime: { environment: string; sizeClass: string; accelerator: string | null; runtimeId: string } | null;
  /** Ancillary holds: the kind (snapshot, volume, egress). */
  ancillaryKind: string | null;
}

/**
 * Every ledger transaction of the account posted in [from, to) that moved its balance, with what it
 * was for. A runtime is found from its hold's reference (its runtime id, the primary key) and checked
 * by hold id: `runtimes` has no index by hold id, so a join on it alone read the whole table.
 */
export async function movements(ds: DataSource, accountId: string, from: Date, to: Date): Promise<Movement[]> {
  const found = await rows<{
    id: string;
    kind: string;
    source: string | null;
    clawback: boolean;
    issued: string;
    consumption: string;
    expired: string;
    runtime_id: string | null;
    environment: string | null;
    size_class: string | null;
    accelerator: string | null;
    ancillary_kind: string | null;
  }>(
    ds,
    `SELECT t.id::text AS id, t.kind, g.source, (t.explanation ? 'clawedBack') AS clawback,
       coalesce(sum(e.amount) FILTER (WHERE e.ledger_account = 'issued'), 0)::text AS issued,
       coalesce(sum(e.amount) FILTER (WHERE e.ledger_account = 'consumption'), 0)::text AS consumption,
       coalesce(sum(e.amount) FILTER (WHERE e.ledger_account = 'expired'), 0)::text AS expired,
       r.runtime_id, coalesce(r.environment->>'name', '') AS environment, r.size_class,
       CASE WHEN r.environment ? 'accelerator' AND jsonb_typeof(r.environment->'accelerator') = 'object'
            THEN concat(r.environment->'accelerator'->>'count', ' × ', r.environment->'accelerator'->>'type') END AS accelerator,
       CASE WHEN t.hold_id LIKE 'anc\\_%' THEN split_part(h.reference, ':', 1) END AS ancillary_kind
     FROM ledger_transactions t
     JOIN ledger_entries e ON e.transaction_id = t.id AND e.ledger_account IN ('issued', 'consumption', 'expired')
     LEFT JOIN grants g ON g.id = t.grant_id
     LEFT JOIN holds h ON h.id = t.hold_id
     LEFT JOIN runtimes r ON r.runtime_id = h.reference AND r.hold_id = t.hold_id
     WHERE t.account_id = $1 AND t.kind <> '' AND t.created_at >= $2 AND t.created_at < $3
     GROUP BY t.id, t.kind, g.source, t.explanation, r.runtime_id, r.environment, r.size_class, h.reference
     ORDER BY t.id`,
    [accountId, from, to],
  );
  return found.map((r) => ({
    transactionId: r.id,
    kind: r.kind,
    grantSource: r.source,
    clawback: r.clawback,
    issued: BigInt(r.issued),
    consumption: BigInt(r.consumption),
    expired: BigInt(r.expired),
    runtime: r.runtime_id
      ? { runtimeId: r.runtime_id, environment: r.environment ?? '', sizeClass: r.size_class ?? '', accelerator: r.accelerator }
      : null,
    ancillaryKind: r.ancillary_kind,
  }));
}

export interface InvoiceRow {
  invoiceId: string;
  status: string;
  periodStart: Date;
  periodEnd: Date;
  seatQuantity: number | null;
  /** The lines as Stripe invoiced them; null when recorded before amounts were kept. */
  lines: InvoiceLineSnapshot[] | null;
  totalCents: number | null;
}

/** Team invoices whose billing period starts in [from, to). */
export async function invoices(ds: DataSource, accountId: string, from: Date, to: Date): Promise<InvoiceRow[]> {
  const found = await rows<{
    invoice_id: string;
    status: string;
    period_start: Date;
    period_end: Date;
    seat_quantity: number | null;
    lines: InvoiceLineSnapshot[] | null;
    total_cents: string | null;
  }>(
    ds,
    `SELECT invoice_id, status, period_start, period_end, seat_quantity, lines, total_cents::text FROM stripe_invoices
     WHERE account_id = $1 AND period_start >= $2 AND period_start < $3 ORDER BY period_start, invoice_id`,
    [accountId, from, to],
  );
  return found.map((r) => ({
    invoiceId: r.invoice_id,
    status: r.status,
    periodStart: r.period_start,
    periodEnd: r.period_end,
    seatQuantity: r.seat_quantity,
    lines: r.lines,
    totalCents: r.total_cents === null ? null : Number(r.total_cents),
  }));
}

export interface TopUpRow {
  sessionId: string;
  pack: string;
  credits: bigint;
  /** What Stripe Checkout charged (the session's `amount_total`); null when Stripe did not say. */
  amountCents: number | null;
  at: Date;
}

/** Top-ups bought through Stripe whose credits were granted in [from, to) (the `top_ups` line's transactions), with their price. */
export async function topUps(ds: DataSource, accountId: string, from: Date, to: Date): Promise<TopUpRow[]> {
  const found = await rows<{ session_id: string; pack: string; credits: string; amount_cents: number | null; at: Date }>(
    ds,
    `SELECT u.session_id, u.pack, u.credits::text, u.amount_cents, g.created_at AS at FROM stripe_top_ups u JOIN grants g ON g.id = u.grant_id
     WHERE u.account_id = $1 AND g.created_at >= $2 AND g.created_at < $3 ORDER BY g.created_at, u.session_id`,
    [accountId, from, to],
  );
  return found.map((r) => ({ sessionId: r.session_id, pack: r.pack, credits: BigInt(r.credits), amountCents: r.amount_cents, at: r.at }));
}

export async function accountTerms(ds: DataSource, accountId: string): Promise<{ plan: string; overrides: unknown } | undefined> {
  const [r] = await rows<{ plan: string; plan_overrides: unknown }>(ds, `SELECT plan, plan_overrides FROM accounts WHERE id = $1`, [
    accountId,
  ]);
  return r && { plan: r.plan, overrides: r.plan_overrides };
}
