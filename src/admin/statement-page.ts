import type { StatementJson } from 'src/statements/dto/statement.dto';
import { credits, dollars, esc, shell, table, when, type Viewer } from './render';

/** Hides the console's frame when printed: the statement alone on paper (or a PDF, from the browser's print dialog). */
const PRINT = `<style>@media print{header,.skip,.no-print{display:none!important}main{padding:0}section{border:0;box-shadow:none}}</style>`;

/** One account's statement for a calendar month, printable. */
export function statementPage(s: StatementJson, accountName: string, viewer: Viewer): string {
  const base = `/admin/accounts/${encodeURIComponent(s.accountId)}`;
  const [y, m] = s.period.split('-').map(Number) as [number, number];
  const prev = `${m === 1 ? y - 1 : y}-${String(m === 1 ? 12 : m - 1).padStart(2, '0')}`;
  const next = `${m === 12 ? y + 1 : y}-${String(m === 12 ? 1 : m + 1).padStart(2, '0')}`;
  const value = `1 credit = ${dollars(s.creditValue.centsPerCredit)}`;
  const money = s.lines.filter((l) => l.section !== 'unpriced');
  const unpriced = s.lines.filter((l) => l.section === 'unpriced');
  const body = `${PRINT}<section id="statement"><h2>Statement ${esc(s.period)} · ${esc(accountName)}</h2>
<p class="no-print"><a href="${esc(base)}">Back to the account</a> · <a href="${esc(`${base}/statements/${prev}`)}">${esc(prev)}</a> · <a href="${esc(`${base}/statements/${next}`)}">${esc(next)}</a> ·
<a href="${esc(`${base}/statements/${s.period}?format=csv`)}">CSV</a> · print this page for a PDF</p>
<dl class="facts"><dt>Account</dt><dd><code>${esc(s.accountId)}</code></dd><dt>Plan</dt><dd>${esc(s.plan.name)}</dd><dt>Period</dt><dd>${when(s.from)} to ${when(s.to)} (UTC, end excluded)</dd>
<dt>Credit value</dt><dd>${esc(value)} (plan fees and top-up prices are in dollars, everything else in credits)</dd></dl>
<div class="totals"><div><b data-statement="opening">${esc(credits(s.openingBalance))}</b>Opening balance</div><div><b>${esc(credits(s.reconciliation.movements))}</b>Movements</div><div><b data-statement="closing">${esc(credits(s.closingBalance))}</b>Closing balance</div></div>
${table(
  'table-statement',
  'Movements of the period (credits; from the ledger: opening + movements = closing)',
  [
    { key: 'section', value: (l) => String(l.section).replace(/_/g, ' ') },
    { key: 'description' },
    { key: 'count', num: true },
    { key: 'credits', format: 'credits', num: true },
  ],
  money,
  { empty: 'No movement in this period.' },
)}
${table(
  'table-ancillary',
  'Ancillary usage metered in the period, by kind',
  [
    { key: 'kind' },
    { key: 'quantity', num: true, value: (a) => `${credits(a.quantity as string)} ${String(a.unit)}` },
    { key: 'priced', value: (a) => (a.priced ? 'priced' : 'unpriced') },
    { key: 'amount', label: 'Due', format: 'credits', num: true },
    { key: 'charged', format: 'credits', num: true },
    { key: 'unpaid', format: 'credits', num: true },
  ],
  s.ancillary,
  { empty: 'No ancillary usage.' },
)}
${table(
  'table-unpriced',
  'Unpriced usage: metered, not billed',
  [
    { key: 'description' },
    { key: 'quantity', num: true, value: (l) => `${credits(l.quantity as string)} ${String(l.unit)}` },
    { key: 'included', label: 'Included in the plan', num: true, value: (l) => credits(l.included as string) },
    { key: 'beyondIncluded', label: 'Beyond included', num: true, value: (l) => credits(l.beyondIncluded as string) },
  ],
  unpriced,
  { empty: 'None: all usage of the period is priced.' },
)}
${table(
  'table-fees',
  'Fees invoiced by Stripe (dollars)',
  [
    { key: 'description' },
    { key: 'invoiceId', label: 'Invoice' },
    { key: 'status' },
    { key: 'periodStart', label: 'Cycle from', format: 'when' },
    { key: 'amountCents', label: 'Amount', format: 'dollars', num: true },
  ],
  s.fees,
  { empty: 'No fees invoiced in this period.' },
)}
${table(
  'table-top-ups',
  'Top-ups bought (dollars; their credits are in the top-ups line)',
  [
    { key: 'pack' },
    { key: 'sessionId', label: 'Checkout session' },
    { key: 'at', label: 'Granted', format: 'when' },
    { key: 'credits', format: 'credits', num: true },
    { key: 'amountCents', label: 'Price', format: 'dollars', num: true },
  ],
  s.topUps,
  { empty: 'No top-up bought in this period.' },
)}</section>`;
  return shell(`Statement ${s.period} · ${accountName}`, viewer, 'accounts', body);
}
