import type { AccountView } from 'src/accounts/accounts.service';
import type { AccountKeyView } from 'src/accounts/auth/api-keys.service';
import type { AuditRow } from 'src/audit/audit.service';
import type { LiveRuntimeView } from 'src/metering/runtime-admin.service';
import type { PlanView } from 'src/plans/plan-admin.service';
import type { QuotasView, QuotaUse } from 'src/plans/quotas.service';
import type { SpendAlertView, SpendLimitView } from 'src/spend-limits/spend-limits.service';
import type { RowsPage } from 'src/common/database/page-of-rows';
import type { GrantJson } from 'src/ledger/http';
import type { BillingHistory } from 'src/stripe/subscriptions.service';
import { grantFields, limitFields, planFields, suspendFields } from './action-forms';
import { pageParams, pageUrl, pagingOf, type PagedTables, type TablePages } from './paging';
import { credits, duration, esc, hidden, table, when, type Viewer } from './render';

/**
 * The account page's tables that can be longer than a page, each by the query parameter of its
 * page; the links lead back to the table's section (to the table itself where two share one). The
 * alerts, invoices and top-ups are read a page at a time; the ledger, the spend limits, the members,
 * the keys and the audit trail have cursors (ACCOUNT_LISTS).
 */
export const ACCOUNT_TABLES = {
  grantsPage: { section: 'wallet', size: 200 },
  runtimesPage: { section: 'runtimes', size: 200 },
  alertsPage: { section: 'table-alerts', size: 100 },
  invoicesPage: { section: 'stripe', size: 24 },
  topUpsPage: { section: 'table-topups', size: 24 },
} as const satisfies PagedTables;
export type AccountPages = TablePages<typeof ACCOUNT_TABLES>;

/**
 * The rows a page shows of the lists read with a cursor, each from its own index as far as the page
 * and one row more (whether a next page exists), never counted whole: an account can have tens of
 * thousands of members, member spend limits or keys.
 */
export const ACCOUNT_LISTS = { limits: 200, members: 200, keys: 200 } as const;

export interface AccountPageData {
  account: AccountView;
  plan: PlanView;
  /** The plans an admin can choose (the catalog's). */
  planIds: readonly string[];
  quotas: QuotasView | null;
  wallet: {
    total: string;
    held: string;
    available: string;
    debt: string;
    grants: GrantJson[];
  };
  spend: { spent: string; held: string; limit: string | null; from: string; to: string };
  ledger: { items: Record<string, unknown>[]; nextCursor: string | null; cursor: string | undefined };
  runtimes: LiveRuntimeView[];
  /** A page of the spend limits (the account-wide one first), and the account-wide limit's thresholds. */
  limits: { items: SpendLimitView[]; next: string | null; thresholds: number[] | null; cursor: string | undefined };
  alerts: RowsPage<SpendAlertView>;
  members: {
    seats: number;
    members: { userId: string; active: boolean; changedAt: string }[];
    next: string | null;
    cursor: string | undefined;
  };
  subscription: Record<string, unknown>;
  billing: BillingHistory;
  keys: { items: AccountKeyView[]; next: string | null; cursor: string | undefined };
  audit: { items: AuditRow[]; nextCursor: string | null; cursor: string | undefined };
  /** The page of rows each long table shows. */
  pages: AccountPages;
  done?: string;
  idempotencyKey: string;
}

const SOURCE: Record<string, string> = { plan_allowance: 'Plan allowance', top_up: 'Top-up', admin: 'Admin grant', promotion: 'Promotion' };

function badge(text: string, tone: 'good' | 'bad' | 'warn' | '' = ''): string {
  return `<span class="badge ${tone}">${esc(text)}</span>`;
}

function quota(name: string, q: QuotaUse): Record<string, unknown> {
  return {
    quota: name,
    used: q.used,
    limit: q.limit === null ? 'unlimited' : q.limit,
    left: q.limit === null ? '—' : Math.max(0, q.limit - q.used),
    resetsAt: q.resetsAt,
  };
}

function json(v: unknown): string {
  return v === null || v === undefined ? '<span class="none">—</span>' : `<pre>${esc(JSON.stringify(v, null, 1))}</pre>`;
}

/** A form that changes something: POSTs with the session's CSRF token; the server answers with a confirmation step first. */
function actionForm(viewer: Viewer, action: string, summary: string, fields: string, button: string, danger = false): string {
  if (!viewer.canAct) return '';
  return `<details class="action"><summary>${esc(summary)}</summary><form method="post" action="${esc(action)}" class="action">${hidden({ csrf: viewer.csrf })}${fields}<button type="submit"${danger ? ' class="danger"' : ''}>${esc(button)}…</button></form></details>`;
}

/** What a cursor's pager says: its first page, its next, and that there is none. */
const NEWEST = { first: 'Newest', next: 'Older entries', none: 'No older entries.' };

/** A cursor's pager (newest, older entries); its links keep the other cursors and the tables' pages. */
function pager(
  base: string,
  kept: Record<string, string | undefined>,
  param: string,
  next: string | null,
  current: string | undefined,
  anchor: string,
  words = NEWEST,
): string {
  const first = current ? `<a href="${esc(pageUrl(base, { ...kept, [param]: undefined }))}#${anchor}">${esc(words.first)}</a>` : '';
  const more = next
    ? `<a href="${esc(pageUrl(base, { ...kept, [param]: next }))}#${anchor}">${esc(words.next)}</a>`
    : `<span class="none">${esc(words.none)}</span>`;
  return `<nav class="pager" aria-label="${esc(anchor)} pages">${first}${more}</nav>`;
}

export function accountPage(d: AccountPageData, viewer: Viewer): string {
  const a = d.account;
  const base = `/admin/accounts/${encodeURIComponent(a.id)}`;
  const cursors = {
    ledgerCursor: d.ledger.cursor,
    auditCursor: d.audit.cursor,
    limitsCursor: d.limits.cursor,
    membersCursor: d.members.cursor,
    keysCursor: d.keys.cursor,
  };
  // A page's links keep the cursors and the other tables' pages; a cursor's keep the pages.
  const paging = pagingOf(base, ACCOUNT_TABLES, d.pages, cursors);
  const kept = { ...cursors, ...pageParams(d.pages) };
  const sub = d.subscription.subscription as Record<string, unknown> | null;
  const status =
    a.status === 'suspended'
      ? badge(`suspended (${a.suspendedFor.map((c) => (c === 'admin' ? 'by an admin' : 'for non-payment')).join(', ')})`, 'bad')
      : badge('active', 'good');
  // The console places and lifts an admin's suspension; one for non-payment is lifted by the payment,
  // or waived by an admin.
  const byAdmin = a.suspendedFor.includes('admin');
  const forPayment = a.suspendedFor.includes('non_payment');
  const pastDue = sub && ['past_due', 'unpaid'].includes(String(sub.status)) ? ` ${badge(`Stripe ${String(sub.status)}`, 'warn')}` : '';
  const effective = d.plan.effective;
  const head = `<section id="summary"><h2>${esc(a.name ?? a.id)} ${status}${pastDue}</h2>
${d.done ? `<p class="flash" role="status">${esc(d.done)}</p>` : ''}
<dl class="facts"><dt>Account id</dt><dd><code>${esc(a.id)}</code></dd><dt>Kind</dt><dd>${esc(a.kind)}</dd><dt>Plan</dt><dd>${esc(String(effective.name ?? a.plan))}${d.plan.overrides ? ' (with overrides)' : ''}</dd>
<dt>Available</dt><dd data-fact="available">${esc(credits(d.wallet.available))} credits</dd><dt>Held</dt><dd>${esc(credits(d.wallet.held))} credits</dd>
<dt>Spent this month</dt><dd>${esc(credits(d.spend.spent))} credits${d.spend.limit ? ` of a ${esc(credits(d.spend.limit))} limit` : ''}</dd><dt>Created</dt><dd>${when(a.createdAt)}</dd>
<dt>Statement</dt><dd><a href="${esc(`${base}/statements/${d.spend.from.slice(0, 7)}`)}" data-link="statement">This month's statement</a></dd></dl></section>`;

  const planSection = `<section id="plan"><h2>Plan and quotas</h2>
<dl class="facts"><dt>Plan</dt><dd>${esc(d.plan.plan)}</dd><dt>Period</dt><dd>${when(d.plan.period.from)} to ${when(d.plan.period.to)}</dd><dt>Included credits</dt><dd>${esc(credits(effective.includedCredits as string))}</dd>
<dt>Size classes</dt><dd>${esc((effective.sizeClasses as string[]).join(', '))}${effective.gpus ? ' · GPUs' : ' · no GPUs'}</dd><dt>Overrides</dt><dd>${json(d.plan.overrides)}</dd></dl>
${d.quotas ? table('table-quotas', 'Quotas used in the current period', [{ key: 'quota' }, { key: 'used', num: true }, { key: 'limit', label: 'Limit', num: true, format: 'text' }, { key: 'left', num: true }, { key: 'resetsAt', label: 'Resets at', format: 'when' }], [quota('Runs', d.quotas.runs), quota('Agents', d.quotas.agents), quota('Concurrent runtimes', d.quotas.concurrency)]) : ''}
${actionForm(
  viewer,
  `${base}/plan`,
  'Change plan or Enterprise overrides',
  planFields(d.planIds, { plan: d.plan.plan, overrides: d.plan.overrides ? JSON.stringify(d.plan.overrides) : '' }),
  'Change plan',
)}</section>`;

  const walletSection = `<section id="wallet"><h2>Wallet</h2>
<div class="totals"><div><b data-wallet="total">${esc(credits(d.wallet.total))}</b>Total</div><div><b>${esc(credits(d.wallet.held))}</b>Held</div><div><b data-wallet="available">${esc(credits(d.wallet.available))}</b>Available</div><div><b>${esc(credits(d.wallet.debt))}</b>Debt</div></div>
${table(
  'table-grants',
  'Grants with credits left, in burn order (earliest expiry first, then priority, then oldest)',
  [
    { key: 'order', label: '#', num: true },
    { key: 'id', label: 'Grant' },
    { key: 'source', value: (g) => SOURCE[String(g.source)] ?? String(g.source) },
    { key: 'amount', label: 'Granted', format: 'credits', num: true },
    { key: 'remaining', format: 'credits', num: true },
    { key: 'expiresAt', label: 'Expires', format: 'html', value: (g) => (g.expiresAt ? when(g.expiresAt as string) : 'never') },
    { key: 'createdAt', label: 'Granted at', format: 'when' },
  ],
  d.wallet.grants.map((g, i) => ({ ...g, order: i + 1 })),
  { empty: 'No credits left.', stack: true, paging: paging('grantsPage') },
)}
${actionForm(viewer, `${base}/grant`, 'Grant credits', grantFields({ idempotencyKey: d.idempotencyKey }), 'Grant')}</section>`;

  const runtimeSection = `<section id="runtimes"><h2>Live reservations and runtimes</h2>
${table(
  'table-runtimes',
  'Runtimes that hold credits or may still run',
  [
    { key: 'runtimeId', label: 'Runtime' },
    {
      key: 'status',
      format: 'html',
      value: (r) => badge(String(r.status), r.status === 'running' ? 'good' : r.status === 'terminating' ? 'warn' : ''),
    },
    { key: 'environment', value: (r) => [r.environment, r.sizeClass, r.gpu].filter(Boolean).join(' · ') },
    { key: 'userId', label: 'User / agent', value: (r) => [r.userId, r.agentId].filter(Boolean).join(' / ') || null },
    { key: 'ratePerHour', label: 'Rate / hour', format: 'credits', num: true },
    { key: 'reserved', label: 'Hold', format: 'credits', num: true },
    { key: 'chargedSoFar', label: 'Charged so far', format: 'credits', num: true },
    { key: 'runningSeconds', label: 'Running for', num: true, value: (r) => duration(r.runningSeconds as number) },
    {
      key: 'commands',
      label: 'Commands issued',
      format: 'html',
      value: (r) =>
        (r.commands as LiveRuntimeView['commands'])
          .map((c) => `${esc(c.reason)} ${when(c.issuedAt)}${c.acknowledgedAt ? ' (acknowledged)' : ''}`)
          .join('<br>') || '—',
    },
    {
      key: 'act',
      label: 'Action',
      format: 'html',
      value: (r) =>
        viewer.canAct
          ? `<form method="post" action="${esc(`${base}/runtimes/${encodeURIComponent(String(r.runtimeId))}/terminate`)}" class="inline">${hidden({ csrf: viewer.csrf })}<button type="submit" class="danger" aria-label="Terminate ${esc(String(r.runtimeId))}">Terminate…</button></form>`
          : '—',
    },
  ],
  d.runtimes as unknown as Record<string, unknown>[],
  { empty: 'Nothing running or reserved.', stack: true, paging: paging('runtimesPage') },
)}</section>`;

  const ledgerSection = `<section id="ledger"><h2>Ledger</h2>
${table(
  'table-ledger',
  'Transactions, newest first, each with its explanation',
  [
    { key: 'at', format: 'when' },
    { key: 'kind' },
    { key: 'amount', format: 'credits', num: true },
    { key: 'balanceAfter', label: 'Balance after', format: 'credits', num: true },
    { key: 'availableAfter', label: 'Available after', format: 'credits', num: true },
    { key: 'explanation' },
  ],
  d.ledger.items,
  { empty: 'No transactions yet.', stack: true },
)}
${pager(base, kept, 'ledgerCursor', d.ledger.nextCursor, d.ledger.cursor, 'ledger')}</section>`;

  const thresholdsOf = d.limits.thresholds ?? [50, 80, 100];
  const limitSection = `<section id="spend-limit"><h2>Spend limits and alerts</h2>
${table(
  'table-limits',
  'Limits this month (account-wide and per member)',
  [
    {
      key: 'scope',
      value: (l) => ((l.scope as { userId: string } | null)?.userId ? `member ${(l.scope as { userId: string }).userId}` : 'whole account'),
    },
    { key: 'credits', label: 'Limit', num: true, value: (l) => (l.credits === null ? 'no limit' : credits(l.credits as string)) },
    { key: 'thresholds', value: (l) => (l.thresholds as number[]).map((t) => `${t} %`).join(', ') },
    { key: 'spent', format: 'credits', num: true },
    { key: 'held', format: 'credits', num: true },
    { key: 'remaining', format: 'credits', num: true },
  ],
  d.limits.items as unknown as Record<string, unknown>[],
  { empty: 'No spend limit.', stack: true, limit: ACCOUNT_LISTS.limits },
)}
${pager(base, kept, 'limitsCursor', d.limits.next, d.limits.cursor, 'spend-limit', { first: 'First limits', next: 'Next limits', none: 'No more limits.' })}
${table(
  'table-alerts',
  'Alerts, newest first, with the limit in force when each fired',
  [
    { key: 'at', format: 'when' },
    {
      key: 'scope',
      value: (x) => ((x.scope as { userId: string } | null)?.userId ? `member ${(x.scope as { userId: string }).userId}` : 'whole account'),
    },
    { key: 'kind', value: (x) => (x.kind === 'reached' ? 'limit reached' : `${String(x.threshold)} % crossed`) },
    { key: 'spent', label: 'Spent then', format: 'credits', num: true },
    {
      key: 'limitAtTheTime',
      label: 'Limit then',
      format: 'html',
      num: true,
      value: (x) =>
        x.limitAtTheTime === null
          ? '<span class="none" title="recorded before the limit was kept with each alert">not recorded</span>'
          : esc(credits(x.limitAtTheTime as string)),
    },
  ],
  d.alerts.items as unknown as Record<string, unknown>[],
  { empty: 'No alerts.', stack: true, paging: paging('alertsPage', { page: d.alerts.page, total: d.alerts.total }) },
)}
${actionForm(
  viewer,
  `${base}/spend-limit`,
  'Set or clear a spend limit',
  limitFields({ thresholds: thresholdsOf.join(', ') }),
  'Set limit',
)}</section>`;

  const membersSection = `<section id="members"><h2>Members and seats</h2><p>${d.members.seats} active seat${d.members.seats === 1 ? '' : 's'}.</p>
${table(
  'table-members',
  'Members',
  [
    { key: 'userId', label: 'User' },
    { key: 'active', value: (m) => (m.active ? 'active' : 'removed') },
    { key: 'changedAt', label: 'Changed at', format: 'when' },
  ],
  d.members.members,
  { empty: 'No members.', stack: true, limit: ACCOUNT_LISTS.members },
)}
${pager(base, kept, 'membersCursor', d.members.next, d.members.cursor, 'members', { first: 'First members', next: 'Next members', none: 'No more members.' })}</section>`;

  const stripeSection = `<section id="stripe"><h2>Stripe</h2>
${sub ? `<dl class="facts"><dt>Subscription</dt><dd><code>${esc(String(sub.id))}</code> ${badge(String(sub.status), sub.status === 'active' ? 'good' : 'warn')}</dd><dt>Customer</dt><dd><code>${esc(String(sub.customerId))}</code></dd><dt>Seat quantity</dt><dd>${esc(String(sub.seatQuantity))}</dd>${sub.pastDueSince ? `<dt>Past due since</dt><dd>${when(String(sub.pastDueSince))}</dd>` : ''}</dl>` : '<p class="none">No Stripe subscription.</p>'}
${table(
  'table-invoices',
  'Invoices (amount from the plan prices and the seat quantity)',
  [
    { key: 'invoiceId', label: 'Invoice' },
    { key: 'status' },
    { key: 'periodStart', label: 'Period from', format: 'when' },
    { key: 'periodEnd', label: 'to', format: 'when' },
    { key: 'seatQuantity', label: 'Seats billed', num: true },
    { key: 'amountCents', label: 'Amount', format: 'dollars', num: true },
  ],
  d.billing.invoices.items,
  {
    empty: 'No invoices.',
    stack: true,
    paging: paging('invoicesPage', { page: d.billing.invoices.page, total: d.billing.invoices.total }),
  },
)}
${table(
  'table-topups',
  'Top-ups',
  [
    { key: 'at', format: 'when' },
    { key: 'pack' },
    { key: 'credits', format: 'credits', num: true },
    { key: 'amountCents', label: 'Paid', format: 'dollars', num: true },
    { key: 'clawedBack', label: 'Clawed back', format: 'credits', num: true },
  ],
  d.billing.topUps.items,
  { empty: 'No top-ups.', stack: true, paging: paging('topUpsPage', { page: d.billing.topUps.page, total: d.billing.topUps.total }) },
)}</section>`;

  const keysSection = `<section id="keys"><h2>API keys of this account</h2>
${table(
  'table-keys',
  'Keys with the account scope',
  [
    { key: 'id', label: 'Key' },
    { key: 'name' },
    { key: 'createdAt', label: 'Created', format: 'when' },
    { key: 'revokedAt', label: 'Revoked', format: 'when' },
    {
      key: 'act',
      label: 'Action',
      format: 'html',
      value: (k) =>
        viewer.canAct && !k.revokedAt
          ? `<form method="post" action="${esc(`${base}/keys/${encodeURIComponent(String(k.id))}/revoke`)}" class="inline">${hidden({ csrf: viewer.csrf })}<button type="submit" class="danger" aria-label="Revoke ${esc(String(k.id))}">Revoke…</button></form>`
          : '—',
    },
  ],
  d.keys.items as unknown as Record<string, unknown>[],
  { empty: 'No keys.', stack: true, limit: ACCOUNT_LISTS.keys },
)}
${pager(base, kept, 'keysCursor', d.keys.next, d.keys.cursor, 'keys', { first: 'Newest', next: 'Older keys', none: 'No older keys.' })}</section>`;

  const auditSection = `<section id="audit"><h2>Audit trail</h2>
${table(
  'table-audit',
  'Every change to this account, newest first',
  [
    { key: 'at', format: 'when' },
    { key: 'actor' },
    { key: 'action' },
    { key: 'before', format: 'html', value: (r) => json(r.before) },
    { key: 'after', format: 'html', value: (r) => json(r.after) },
  ],
  d.audit.items as unknown as Record<string, unknown>[],
  { empty: 'No audit rows.', stack: true },
)}
${pager(base, kept, 'auditCursor', d.audit.nextCursor, d.audit.cursor, 'audit')}</section>`;

  const suspendSection = viewer.canAct
    ? `<section id="status"><h2>Account status</h2>${actionForm(
        viewer,
        `${base}/suspension`,
        byAdmin
          ? a.suspendedFor.length > 1
            ? "Lift the admin's suspension (the account stays suspended for non-payment)"
            : 'Reactivate the account'
          : 'Suspend the account',
        suspendFields({ suspended: byAdmin ? 'no' : 'yes' }),
        byAdmin ? 'Reactivate' : 'Suspend',
        !byAdmin,
      )}${
        forPayment
          ? actionForm(
              viewer,
              `${base}/suspension`,
              byAdmin ? "Waive the suspension for non-payment (the admin's suspension stays)" : 'Waive the suspension for non-payment',
              suspendFields({ suspended: 'no', cause: 'non_payment' }),
              'Waive',
            )
          : ''
      }</section>`
    : '';

  return `<p><a href="/admin/accounts">← Accounts</a></p>${head}<div class="grid">${walletSection}${planSection}</div>${runtimeSection}${ledgerSection}<div class="grid">${limitSection}${membersSection}</div><div class="grid">${stripeSection}${keysSection}</div>${suspendSection}${auditSection}`;
}
