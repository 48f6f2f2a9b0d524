import type { AccountListItem, AccountListQuery } from 'src/reports/account-directory';
import type { Period } from 'src/reports/reports.service';
import { credits, esc, table } from './render';

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

const check = (q: AccountListQuery, name: 'suspended' | 'pastDue' | 'lowBalance' | 'overThreshold', text: string) =>
  `<label class="check" for="f-${name}"><input type="checkbox" id="f-${name}" name="${name}" value="yes"${q[name] === 'yes' ? ' checked' : ''}>${esc(text)}</label>`;

/** The sort as form fields too: on a phone the list stacks its rows and the sortable headers are hidden. */
function sortControls(q: AccountListQuery): string {
  const option = (value: string, text: string, current: string) =>
    `<option value="${value}"${current === value ? ' selected' : ''}>${text}</option>`;
  return `<label for="f-sort">Sort by<select id="f-sort" name="sort">${option('id', 'Account id', q.sort)}${option('balance', 'Available balance', q.sort)}${option('consumption', 'Consumption in period', q.sort)}</select></label>
<label for="f-dir">Order<select id="f-dir" name="dir">${option('desc', 'Largest first (Z–A)', q.dir)}${option('asc', 'Smallest first (A–Z)', q.dir)}</select></label>`;
}

export function accountsPage(
  q: AccountListQuery,
  period: Period,
  result: { items: AccountListItem[]; total: number; page: number; pages: number },
  planIds: readonly string[],
): string {
  const plans = ['', ...planIds]
    .map((p) => `<option value="${esc(p)}"${(q.plan ?? '') === p ? ' selected' : ''}>${esc(p || 'any plan')}</option>`)
    .join('');
  const form = `<section><form method="get" action="/admin/accounts" class="filters" role="search">
<label for="q">Search by id or name<input id="q" type="search" name="q" value="${esc(q.q ?? '')}" size="24"></label>
<label for="plan">Plan<select id="plan" name="plan">${plans}</select></label>
${check(q, 'suspended', 'Suspended')}${check(q, 'pastDue', 'Past due')}${check(q, 'lowBalance', 'Low balance')}${check(q, 'overThreshold', 'Over a spend-limit threshold this month')}
<label for="from">Consumption from (UTC)<input id="from" name="from" value="${esc(period.from.toISOString())}" size="22"></label>
<label for="to">to<input id="to" name="to" value="${esc(period.to.toISOString())}" size="22"></label>
${sortControls(q)}
<button type="submit">Search</button> <a href="/admin/accounts">Clear</a></form></section>`;
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
