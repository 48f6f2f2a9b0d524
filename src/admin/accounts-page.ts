import type { AccountListItem, AccountListQuery } from 'src/reports/account-directory';
import type { Period } from 'src/reports/reports.service';
import type { BillingException, Finding } from 'src/common/errors/billing.exception';
import { field, focusFirstInvalid } from './form-fields';
import { credits, esc, problem, table } from './render';

function href(q: AccountListQuery, change: Partial<Record<keyof AccountListQuery, string | number | undefined>>): string {
  const all: Record<string, unknown> = { ...q, ...change };
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(all)) {
    if (v === undefined || v === '' || (k === 'page' && v === 1) || (k === 'sort' && v === 'id') || (k === 'dir' && v === 'asc')) continue;
    params.set(k, String(v));
  }
  const s = params.toString();
  return `/admin/accounts${s ? `?${s}` : ''}`;
}

/** A column header that sorts by it (toggling the direction), with aria-sort for screen readers. */
function sortable(q: AccountListQuery, key: 'id' | 'balance' | 'consumption', text: string): string {
  const active = q.sort === key;
  const next = active && q.dir === 'desc' ? 'asc' : active ? 'desc' : key === 'id' ? 'asc' : 'desc';
  const arrow = active ? (q.dir === 'desc' ? ' ↓' : ' ↑') : '';
  return `<a href="${esc(href(q, { sort: key, dir: next, page: 1 }))}" data-sort="${key}">${esc(text)}${arrow}</a>`;
}

type Values = Record<string, string | undefined>;

/**
 * The search form: the list's query as shown, or after a 400 what was typed, each finding beside its
 * field. The sort is a form field too: on a phone the list stacks its rows and the sortable headers are hidden.
 */
export function filterForm(values: Values, planIds: readonly string[], findings: Finding[] = []): string {
  const check = (name: string, text: string) => field({ id: `f-${name}`, name, label: text, kind: 'checkbox' }, values[name], findings);
  const form = `<form method="get" action="/admin/accounts" class="filters" role="search">
${field({ id: 'q', name: 'q', label: 'Search by id or name', attrs: 'type="search" size="24"' }, values.q, findings)}
${field({ id: 'plan', name: 'plan', label: 'Plan', kind: 'select', options: ['', ...planIds].map((p) => [p, p || 'any plan'] as const) }, values.plan ?? '', findings)}
${check('suspended', 'Suspended')}${check('pastDue', 'Past due')}${check('lowBalance', 'Low balance')}${check('overThreshold', 'Over a spend-limit threshold this month')}
${field({ id: 'from', name: 'from', label: 'Consumption from (UTC)', attrs: 'size="22"' }, values.from, findings)}
${field({ id: 'to', name: 'to', label: 'to', attrs: 'size="22"' }, values.to, findings)}
${field({ id: 'f-sort', name: 'sort', label: 'Sort by', kind: 'select', options: SORTS }, values.sort ?? 'id', findings)}
${field({ id: 'f-dir', name: 'dir', label: 'Order', kind: 'select', options: DIRECTIONS }, values.dir ?? 'asc', findings)}
<button type="submit">Search</button> <a href="/admin/accounts">Clear</a></form>`;
  return `<section>${findings.length ? focusFirstInvalid(form) : form}</section>`;
}

const SORTS = [
  ['id', 'Account id'],
  ['balance', 'Available balance'],
  ['consumption', 'Consumption in period'],
] as const;
const DIRECTIONS = [
  ['desc', 'Largest first (Z–A)'],
  ['asc', 'Smallest first (A–Z)'],
] as const;

/** The list refused (a bad period, sort or page): the form with what was typed, every finding, no list. */
export function refusedAccountsPage(values: Values, planIds: readonly string[], error: BillingException): string {
  return `${problem(error)}${filterForm(values, planIds, error.findings)}`;
}

export function accountsPage(
  q: AccountListQuery,
  period: Period,
  result: { items: AccountListItem[]; total: number; page: number; pages: number },
  planIds: readonly string[],
): string {
  const form = filterForm(
    {
      ...Object.fromEntries(Object.entries(q).map(([k, v]) => [k, v === undefined ? undefined : String(v)])),
      from: period.from.toISOString(),
      to: period.to.toISOString(),
    },
    planIds,
  );
  const rows = result.items as unknown as Record<string, unknown>[];
  const list = table(
    'table-accounts',
    `${result.total} account${result.total === 1 ? '' : 's'} · consumption from ${period.from.toISOString()} to ${period.to.toISOString()}`,
    [
      {
        key: 'id',
        label: 'Account',
        format: 'html',
        value: (a) => `<a href="/admin/accounts/${encodeURIComponent(String(a.id))}">${esc(String(a.id))}</a>`,
      },
      { key: 'name' },
      { key: 'plan' },
      {
        key: 'status',
        format: 'html',
        value: (a) =>
          [
            a.status === 'suspended' ? '<span class="badge bad">suspended</span>' : '<span class="badge good">active</span>',
            a.subscriptionStatus && ['past_due', 'unpaid'].includes(String(a.subscriptionStatus))
              ? `<span class="badge warn">${esc(String(a.subscriptionStatus))}</span>`
              : '',
            a.lowBalance ? '<span class="badge warn">low balance</span>' : '',
            Number(a.alertsThisMonth) > 0
              ? `<span class="badge warn">${esc(String(a.alertsThisMonth))} spend alert${Number(a.alertsThisMonth) === 1 ? '' : 's'}</span>`
              : '',
          ].join(' '),
      },
      { key: 'available', label: 'Available (credits)', num: true, value: (a) => credits(a.available as string) },
      { key: 'held', label: 'Held', num: true, value: (a) => credits(a.held as string) },
      { key: 'consumed', label: 'Consumed in period', num: true, value: (a) => credits(a.consumed as string) },
    ],
    rows,
    { empty: 'No account matches.', stack: true },
  )
    // Sortable headers: the table helper labels columns; these three become links.
    .replace(
      '<th scope="col">Account</th>',
      `<th scope="col" aria-sort="${q.sort === 'id' ? (q.dir === 'desc' ? 'descending' : 'ascending') : 'none'}">${sortable(q, 'id', 'Account')}</th>`,
    )
    .replace(
      '<th scope="col" class="num">Available (credits)</th>',
      `<th scope="col" class="num" aria-sort="${q.sort === 'balance' ? (q.dir === 'desc' ? 'descending' : 'ascending') : 'none'}">${sortable(q, 'balance', 'Available (credits)')}</th>`,
    )
    .replace(
      '<th scope="col" class="num">Consumed in period</th>',
      `<th scope="col" class="num" aria-sort="${q.sort === 'consumption' ? (q.dir === 'desc' ? 'descending' : 'ascending') : 'none'}">${sortable(q, 'consumption', 'Consumed in period')}</th>`,
    );
  const pager = `<nav class="pager" aria-label="Pages">${result.page > 1 ? `<a href="${esc(href(q, { page: result.page - 1 }))}" rel="prev">← Previous</a>` : ''}<span>Page ${result.page} of ${result.pages}</span>${
    result.page < result.pages ? `<a href="${esc(href(q, { page: result.page + 1 }))}" rel="next">Next →</a>` : ''
  }</nav>`;
  return `${form}<section id="accounts"><h2>Accounts</h2>${list}${pager}</section>`;
}
