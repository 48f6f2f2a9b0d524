import type { BillingException, Finding } from 'src/common/errors/billing.exception';
import type { Period, Report } from 'src/reports/reports.service';
import { field, focusFirstInvalid } from './form-fields';
import { pagingOf, type PagedTables, type TablePages } from './paging';
import { barChart, cell, credits, creditsInDollars, dollars, esc, label, problem, reportTable, table, type Series } from './render';

export interface ReportsData {
  period: Period;
  previous: Period;
  credits: Report;
  creditsBefore: Report;
  usage: Report;
  usageBefore: Report;
  top: Report;
  seats: Report;
  byEnv: Report;
  byClass: Report;
  spend: Report;
  reconciliation: Report;
  /** What one credit is worth (the plan catalog), to show credit amounts in dollars too. */
  centsPerCredit: number;
  /** The page of rows each long table shows. */
  pages: ReportPages;
}

/** The reports page's tables that can be longer than a page, each by the query parameter of its page. */
export const PAGED_TABLES = {
  classesPage: { section: 'trends', size: 60 },
  usagePage: { section: 'usage', size: 200 },
  seatsPage: { section: 'seats', size: 200 },
  spendPage: { section: 'spend', size: 200 },
  reconciliationPage: { section: 'reconciliation', size: 200 },
} as const satisfies PagedTables;
export type ReportPages = TablePages<typeof PAGED_TABLES>;

const PERIOD_FIELDS = [
  { id: 'from', name: 'from', label: 'From (UTC, whole hour)', attrs: 'size="24"' },
  { id: 'to', name: 'to', label: 'To (UTC, whole hour, excluded)', attrs: 'size="24"' },
] as const;

/** The period's form: the period shown, or after a 400 what was typed with the findings beside it. */
export function periodForm(values: Record<string, string | undefined>, findings: Finding[] = []): string {
  const form = `<form method="get" action="/admin" class="filters">
${PERIOD_FIELDS.map((f) => field(f, values[f.name], findings)).join('\n')}
<button type="submit">Show</button></form>`;
  return `<section>${findings.length ? focusFirstInvalid(form) : form}</section>`;
}

/** The reports page refused (a bad period or page): the form with what was typed, every finding, no reports. */
export function refusedReportsPage(values: Record<string, string | undefined>, error: BillingException): string {
  return `${problem(error)}${periodForm(values, error.findings)}`;
}

const PALETTE = ['#3b6fd8', '#e07b24', '#2e9e6b', '#8a5ad6', '#c2417a', '#6b7a8f', '#b59a1b', '#1f9aa8'];

const micros = (s: unknown): number => Number(String(s ?? 0)) || 0;

/** "+12.5 %" / "−3.0 %" / "new" for a change from `before` to `now` (numbers as decimal text). */
function delta(now: unknown, before: unknown): string {
  const a = micros(now);
  const b = micros(before);
  if (b === 0) return a === 0 ? '<span class="delta">—</span>' : '<span class="delta up">new</span>';
  const pct = ((a - b) / Math.abs(b)) * 100;
  return `<span class="delta ${pct >= 0 ? 'up' : 'down'}">${pct >= 0 ? '+' : '−'}${Math.abs(pct).toFixed(1)} %</span>`;
}

function comparison(d: ReportsData): string {
  const rows: { measure: string; now: string; before: string; change: string }[] = [];
  const c = d.credits.totals ?? {};
  const cb = d.creditsBefore.totals ?? {};
  for (const k of ['consumed', 'granted', 'topUps', 'expired', 'net']) {
    const worth = (v: unknown) => `${credits(v as string)} · ${creditsInDollars(v as string, d.centsPerCredit)}`;
    rows.push({ measure: `${label(k)} (credits · dollars)`, now: worth(c[k]), before: worth(cb[k]), change: delta(c[k], cb[k]) });
  }
  const u = d.usage.totals ?? {};
  const ub = d.usageBefore.totals ?? {};
  rows.push({
    measure: 'Runtimes settled',
    now: String(u.runtimes ?? 0),
    before: String(ub.runtimes ?? 0),
    change: delta(u.runtimes, ub.runtimes),
  });
  rows.push({
    measure: 'Running hours',
    now: (Number(u.seconds ?? 0) / 3600).toFixed(1),
    before: (Number(ub.seconds ?? 0) / 3600).toFixed(1),
    change: delta(u.seconds, ub.seconds),
  });
  return table(
    'table-comparison',
    `This period against the one before it (${d.previous.from.toISOString()} to ${d.previous.to.toISOString()}, same length)`,
    [
      { key: 'measure', label: 'Measure' },
      { key: 'now', label: 'This period', num: true },
      { key: 'before', label: 'Period before', num: true },
      { key: 'change', label: 'Change', num: true, format: 'html' },
    ],
    rows,
  );
}

/** Per day, one series per size class (and GPU type): credits charged. */
function classTrend(byClass: Report): string {
  const days = [...new Set(byClass.items.map((i) => String(i.day)))];
  const keyOf = (i: Record<string, unknown>) => (i.gpu ? `${String(i.sizeClass)} · ${String(i.gpu)}` : String(i.sizeClass));
  const keys = [...new Set(byClass.items.map(keyOf))].sort();
  const series: Series[] = keys.map((k, n) => ({
    name: k,
    color: PALETTE[n % PALETTE.length]!,
    values: days.map((d) => byClass.items.filter((i) => String(i.day) === d && keyOf(i) === k).reduce((s, i) => s + micros(i.credits), 0)),
  }));
  return barChart('chart-classes', 'Credits charged per day, by size class and GPU type', days, series, ' credits');
}

export function reportsPage(d: ReportsData): string {
  const range = `from=${encodeURIComponent(d.period.from.toISOString())}&to=${encodeURIComponent(d.period.to.toISOString())}`;
  const csv = (name: string, extra = '') =>
    ` <a class="csv" href="/admin/reports/${name}.csv?${range}${extra}">CSV<span class="skip"> of ${esc(label(name))}</span></a>`;
  const t = d.credits.totals ?? {};
  const totals = (['granted', 'topUps', 'consumed', 'refunded', 'expired', 'clawedBack', 'net'] as const)
    .map(
      (k) =>
        `<div><b data-total="${k}">${esc(credits(t[k]))}</b>${esc(label(k))} (credits) · <span data-dollars="${k}">${esc(creditsInDollars(t[k], d.centsPerCredit))}</span></div>`,
    )
    .join('');
  const seatTotals = d.seats.totals ?? {};
  const pageOf = pagingOf('/admin', PAGED_TABLES, d.pages, { from: d.period.from.toISOString(), to: d.period.to.toISOString() });
  /** A long table's page of rows, with the links to the other pages (the other tables stay on theirs) and to the CSV. */
  const paging = (key: keyof ReportPages, csvName?: string, extra = '') =>
    pageOf(
      key,
      csvName
        ? {
            all: `<a href="${esc(`/admin/reports/${csvName}.csv?${range}${extra}`)}">Every row: CSV<span class="skip"> of ${esc(label(csvName))}</span></a>`,
          }
        : {},
    );
  return `${periodForm({ from: d.period.from.toISOString(), to: d.period.to.toISOString() })}
<section id="credits"><h2>Credits${csv('credits', '&groupBy=day')}</h2><div class="totals">${totals}</div>
<p class="none" data-credit-value>In dollars at 1 credit = ${esc(dollars(d.centsPerCredit))} (the plan catalog's credit value).</p>
${barChart(
  'chart-credits',
  'Credits per day: granted (incl. top-ups) and consumed',
  d.credits.items.map((i) => String(i.day)),
  [
    { name: 'granted', color: '#3b6fd8', values: d.credits.items.map((i) => micros(i.granted) + micros(i.topUps)) },
    { name: 'consumed', color: '#e07b24', values: d.credits.items.map((i) => micros(i.consumed)) },
  ],
  ' credits',
)}</section>
<section id="comparison"><h2>Period over period</h2>${comparison(d)}</section>
<section id="trends"><h2>Trends by size class and GPU</h2>${classTrend(d.byClass)}
${reportTable('table-classes', 'Settled runtimes per day, size class and GPU type', d.byClass, { paging: paging('classesPage') })}</section>
<div class="grid">
<section id="top"><h2>Top accounts${csv('top-consumers')}</h2>
${barChart(
  'chart-top',
  'Credits consumed by the top 10 accounts',
  d.top.items.map((i) => String(i.account)),
  [{ name: 'credits', color: '#2e9e6b', values: d.top.items.map((i) => micros(i.credits)) }],
  ' credits',
)}
${table(
  'table-top',
  'Top accounts by credits consumed',
  [
    { key: 'rank', num: true },
    {
      key: 'account',
      format: 'html',
      value: (i) => `<a href="/admin/accounts/${encodeURIComponent(String(i.account))}">${esc(i.account as string)}</a>`,
    },
    { key: 'name' },
    { key: 'plan' },
    { key: 'runtimes', num: true },
    { key: 'seconds', num: true },
    { key: 'credits', num: true },
  ],
  d.top.items,
  { stack: true },
)}</section>
<section id="usage"><h2>Usage by environment${csv('usage', '&groupBy=environment')}</h2>${reportTable('table-usage', 'Settled usage per environment', d.byEnv, { paging: paging('usagePage', 'usage', '&groupBy=environment') })}</section>
</div>
<section id="seats"><h2>Team seats and Stripe${csv('seats')}</h2>
<div class="totals"><div><b>${esc(dollars(seatTotals.expectedMrrCents))}</b>Expected MRR</div><div><b>${esc(dollars(seatTotals.stripeMrrCents))}</b>Stripe MRR</div><div><b>${esc(dollars(seatTotals.invoicedCents))}</b>Invoiced in period</div><div><b>${esc(cell(seatTotals.seats, 'text'))}</b>Seats</div></div>
${barChart(
  'chart-seats',
  'Active seats and Stripe seat quantity per Team account',
  d.seats.items.map((i) => String(i.account)),
  [
    { name: 'active seats', color: '#8a5ad6', values: d.seats.items.map((i) => Number(i.seats)) },
    { name: 'Stripe quantity', color: '#9aa5b4', values: d.seats.items.map((i) => Number(i.stripeQuantity ?? 0)) },
  ],
)}
${reportTable('table-seats', (d.seats.notes ?? [])[0] ?? 'Team seats', d.seats, { paging: paging('seatsPage', 'seats') })}</section>
<section id="spend"><h2>Spend limits and terminations${csv('spend-limits')}</h2>${reportTable('table-spend', 'Alerts (with the limit in force when each fired) and terminations, oldest first', d.spend, { paging: paging('spendPage', 'spend-limits') })}</section>
<section id="reconciliation"><h2>Seat reconciliation${csv('reconciliation')}</h2>${reportTable('table-reconciliation', 'Seat discrepancies found, and drift open now', d.reconciliation, { paging: paging('reconciliationPage', 'reconciliation') })}</section>`;
}
