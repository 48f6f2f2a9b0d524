import type { BillingException } from 'src/common/errors/billing.exception';
import { parseCredits } from 'src/common/money';
import type { Cell } from 'src/reports/reports.service';

/** Escapes text for HTML content and attribute values. */
export function esc(value: Cell | undefined): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Human column labels for the reports' camelCase keys; unknown keys are split into words. */
const LABELS: Record<string, string> = {
  topUps: 'Top-ups',
  clawedBack: 'Clawed back',
  subscriptionStatus: 'Subscription status',
  stripeQuantity: 'Stripe seat quantity',
  expectedMrrCents: 'Expected MRR',
  stripeMrrCents: 'Stripe MRR',
  invoicesPaid: 'Invoices paid',
  invoicesFailed: 'Invoices failed',
  invoicedCents: 'Invoiced in period',
  detectedAt: 'Detected at',
  correctedAt: 'Corrected at',
  resolvedAt: 'Resolved at',
  activeSeats: 'Active seats',
  seconds: 'Running time',
  credits: 'Credits',
  limit: 'Limit when it fired',
  gpu: 'GPU',
  at: 'At',
};

export function label(key: string): string {
  if (LABELS[key]) return LABELS[key];
  const words = key.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** "1234.500000" → "1,234.50": exact (no float), trailing zeros dropped down to two decimals. */
export function credits(value: Cell | undefined): string {
  const s = String(value ?? '');
  const m = /^(-)?(\d+)(?:\.(\d+))?$/.exec(s);
  if (!m) return s;
  const frac = (m[3] ?? '').replace(/0+$/, '').padEnd(2, '0');
  return `${m[1] ?? ''}${m[2]!.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${frac}`;
}

/** Integer cents → "$1,234.56". */
export function dollars(cents: Cell | undefined): string {
  if (cents === null || cents === undefined || cents === '') return '';
  const n = Number(cents);
  const sign = n < 0 ? '-' : '';
  const abs = Math.abs(Math.round(n));
  return `${sign}$${String(Math.floor(abs / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}.${String(abs % 100).padStart(2, '0')}`;
}

/**
 * What an amount of credits ("12.500000") is worth at `centsPerCredit`, as "$3.75": exact in
 * micro-credits, rounded to the nearest cent (half away from zero) only at the end.
 */
export function creditsInDollars(value: Cell | undefined, centsPerCredit: number): string {
  const micros = parseCredits(String(value ?? ''));
  if (micros === undefined) return '';
  const scaled = micros * BigInt(centsPerCredit);
  const abs = scaled < 0n ? -scaled : scaled;
  const cents = (abs + 500_000n) / 1_000_000n;
  return dollars(Number(scaled < 0n ? -cents : cents));
}

/** Seconds → "1 h 05 min" / "4 min 10 s". */
export function duration(seconds: Cell | undefined): string {
  const s = Number(seconds ?? 0);
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
  if (s >= 60) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${s} s`;
}

/** An ISO instant as "2032-05-06 09:00 UTC" (a <time> element keeps the exact value). */
export function when(iso: Cell | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '—';
  const s = String(iso);
  const short = s.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');
  return `<time datetime="${esc(s)}">${esc(short)}</time>`;
}

export type Format = 'text' | 'credits' | 'dollars' | 'duration' | 'when' | 'html';

/** How a report column is shown: cents as dollars, credit amounts as credits, instants and durations readably. */
export function formatOf(column: string): Format {
  if (/Cents$/.test(column)) return 'dollars';
  if (['granted', 'topUps', 'clawedBack', 'consumed', 'refunded', 'expired', 'net', 'credits', 'spent', 'limit'].includes(column)) {
    return 'credits';
  }
  if (column === 'seconds') return 'duration';
  if (['at', 'detectedAt', 'correctedAt'].includes(column)) return 'when';
  return 'text';
}

export function cell(value: Cell | undefined, format: Format): string {
  if (value === null || value === undefined || value === '') return '<span class="none">—</span>';
  switch (format) {
    case 'credits':
      return esc(credits(value));
    case 'dollars':
      return esc(dollars(value));
    case 'duration':
      return esc(duration(value));
    case 'when':
      return when(value);
    case 'html':
      return String(value);
    case 'text':
      return esc(value);
  }
}

export interface Column<T> {
  key: string;
  label?: string;
  format?: Format;
  /** Right-aligned numbers. */
  num?: boolean;
  value?: (row: T) => Cell | undefined;
}

/**
 * A table in a scrolling region, with a caption for screen readers and a row per item. Headers
 * wrap and long ids (the columns the style sheet names) break anywhere, so on a laptop every
 * column fits its card; the region only scrolls (inside the card, never past it) where even that
 * is not enough.
 */
export function table<T extends Record<string, unknown>>(
  id: string,
  caption: string,
  columns: Column<T>[],
  items: T[],
  opts: { limit?: number; more?: string; empty?: string; stack?: boolean; paging?: Paging } = {},
): string {
  const limit = opts.paging?.size ?? opts.limit ?? 200;
  // A table read a page at a time holds that page's rows only, and is told how many there are in all.
  const total = opts.paging?.total ?? items.length;
  const pages = Math.max(1, Math.ceil(total / limit));
  const current = opts.paging ? Math.min(opts.paging.page, pages) : 1;
  const start = (current - 1) * limit;
  const head = columns.map((c) => `<th scope="col"${c.num ? ' class="num"' : ''}>${esc(c.label ?? label(c.key))}</th>`).join('');
  const body = (opts.paging?.total === undefined ? items.slice(start, start + limit) : items)
    .map(
      (item) =>
        `<tr>${columns.map((c) => `<td${c.num ? ' class="num"' : ''} data-col="${esc(c.key)}" data-label="${esc(c.label ?? label(c.key))}">${cell(c.value ? c.value(item) : (item[c.key] as Cell), c.format ?? formatOf(c.key))}</td>`).join('')}</tr>`,
    )
    .join('');
  const more = opts.paging
    ? rowsPager(id, caption, opts.paging, current, pages, start, Math.min(total, start + limit), total)
    : items.length > limit
      ? `<p class="more">${items.length - limit} more rows${opts.more ? `: ${opts.more}` : ''}.</p>`
      : '';
  return `<div class="scroll" role="region" aria-labelledby="${esc(id)}-caption" tabindex="0"><table id="${esc(id)}"${opts.stack ? ' class="stack"' : ''}><caption id="${esc(id)}-caption">${esc(caption)}</caption><thead><tr>${head}</tr></thead><tbody>${
    body || `<tr><td colspan="${columns.length}">${esc(opts.empty ?? 'None.')}</td></tr>`
  }</tbody></table></div>${more}`;
}

/** A table shown a page of rows at a time: the page asked for, the link to another page, and where all the rows are. */
export interface Paging {
  page: number;
  /** Rows a page (200 unless told). */
  size?: number;
  href: (page: number) => string;
  /** A link to every row at once (the report's CSV). */
  all?: string;
  /** Given when the rows handed over are only the page's (read a page at a time): the count of all of them. */
  total?: number;
}

/** "Rows 201–400 of 1,234" with the previous and next pages and the link to every row; nothing when one page holds them all. */
function rowsPager(
  id: string,
  caption: string,
  paging: Paging,
  page: number,
  pages: number,
  from: number,
  to: number,
  total: number,
): string {
  if (pages <= 1) return '';
  const count = (n: number) => n.toLocaleString('en-US');
  return `<nav class="pager" aria-label="${esc(`${caption}: pages`)}"><span data-rows="${esc(id)}">Rows ${count(from + 1)}–${count(to)} of ${count(total)} (page ${page} of ${pages})</span>${
    page > 1 ? `<a href="${esc(paging.href(page - 1))}" rel="prev">← Previous rows</a>` : ''
  }${page < pages ? `<a href="${esc(paging.href(page + 1))}" rel="next">Next rows →</a>` : ''}${paging.all ?? ''}</nav>`;
}

/** A report's own columns, labelled and formatted. */
export function reportTable(
  id: string,
  caption: string,
  report: { columns: string[]; items: Record<string, Cell>[] },
  opts: { limit?: number; more?: string; paging?: Paging } = {},
): string {
  const numeric = (c: string) =>
    ['text', 'when'].includes(formatOf(c)) === false ||
    /^(runtimes|seats|rank|drift|difference|threshold|stripeQuantity|activeSeats|invoicesPaid|invoicesFailed)$/.test(c);
  return table(
    id,
    caption,
    report.columns.map((c) => ({ key: c, num: numeric(c) })),
    report.items,
    { ...opts, stack: true },
  );
}

export interface Series {
  name: string;
  color: string;
  values: number[];
}

/**
 * A bar chart in HTML and CSS: bars are sized in percent of the plot, so the chart follows the
 * width of its card (laptop or phone) and its text keeps its size. Each bar carries its value
 * (`data-value`) and a title; the figure has a text alternative, and the same numbers are in a
 * table beside it.
 */
export function barChart(id: string, title: string, labels: string[], series: Series[], unit = ''): string {
  const max = Math.max(0, ...series.flatMap((s) => s.values));
  const every = Math.max(1, Math.ceil(labels.length / 10));
  const groups = labels
    .map((l, i) => {
      const bars = series
        .map((s) => {
          const v = s.values[i] ?? 0;
          const pct = max > 0 ? Math.round((v / max) * 10_000) / 100 : 0;
          return `<span class="bar" data-series="${esc(s.name)}" data-label="${esc(l)}" data-value="${v}" style="height:${pct}%;background:${s.color}" title="${esc(`${l} · ${s.name}: ${formatNumber(v)}${unit}`)}"></span>`;
        })
        .join('');
      const tick = i % every === 0 ? esc(l.length > 14 ? `${l.slice(0, 13)}…` : l) : '';
      return `<div class="group"><div class="bars">${bars}</div><div class="tick" aria-hidden="true">${tick}</div></div>`;
    })
    .join('');
  const legend = series.map((s) => `<span><i style="background:${s.color}"></i>${esc(s.name)}</span>`).join('');
  const body =
    labels.length === 0
      ? `<p class="none">No data in this period.</p>`
      : `<div class="plot"><div class="ymax" aria-hidden="true">${esc(formatNumber(max))}${esc(unit)}</div>${groups}</div>`;
  return `<figure class="chart"><figcaption>${esc(title)}</figcaption><div id="${esc(id)}" role="img" aria-label="${esc(`${title}: ${labels.length} points, largest ${formatNumber(max)}${unit}`)}">${body}</div><div class="legend">${legend}</div></figure>`;
}

function formatNumber(v: number): string {
  return Number.isInteger(v) ? v.toLocaleString('en-US') : v.toLocaleString('en-US', { maximumFractionDigits: 2 });
}

const STYLE = `*{box-sizing:border-box}body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2430;background:#f4f6f9;font-size:15px;line-height:1.45}
a{color:#1a56b0}a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,.scroll:focus-visible{outline:3px solid #f0a500;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:6px;z-index:9}
header{background:#1f3a5f;color:#fff;padding:10px 20px;display:flex;flex-wrap:wrap;gap:8px 20px;align-items:center}
header h1{font-size:18px;margin:0}header nav{display:flex;gap:4px;flex-wrap:wrap}header nav a{color:#fff;text-decoration:none;padding:6px 10px;border-radius:4px}
header nav a[aria-current=page]{background:#34598a}header .who{margin-left:auto;font-size:13px;display:flex;gap:10px;align-items:center;flex-wrap:wrap}
header form{margin:0}main{padding:16px 20px;max-width:1360px;margin:0 auto}
section{background:#fff;border:1px solid #d9dee5;border-radius:8px;padding:14px 16px;margin:0 0 16px;min-width:0}
h2{font-size:17px;margin:0 0 10px}h3{font-size:15px;margin:14px 0 6px}h2,h3,dd,.flash,.problem{overflow-wrap:anywhere}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,560px),1fr));gap:16px;margin:0 0 16px}.grid>section{margin:0}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:13px;width:100%}caption{text-align:left;font-size:12px;color:#5a6472;padding:0 0 4px}
td,th{border-bottom:1px solid #e4e8ee;padding:5px 8px;text-align:left;vertical-align:top}th{background:#f7f9fb;font-weight:600}td[data-col=id],td[data-col=account],td[data-col=accountId],td[data-col=name],td[data-col=runtimeId],td[data-col=subscription],td[data-col=invoice],td[data-col=invoiceId],td[data-col=eventId],td[data-col=type],td[data-col=topic],td[data-col=group],td[data-col=error],td[data-col=explanation],td[data-col=actor],td[data-col=userId],td[data-col=sessionId],td[data-col=status],td[data-col=pack],td[data-col=environment]{overflow-wrap:anywhere}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}td.num{white-space:nowrap;overflow-wrap:normal}
.totals{display:flex;gap:10px 28px;flex-wrap:wrap;font-size:13px;color:#5a6472;margin:0 0 8px}.totals b{font-size:19px;display:block;color:#1d2430;font-variant-numeric:tabular-nums}
.error{color:#b00020}.ok{color:#1b7f3b}.warn{color:#9a5b00}.none{color:#8a93a0}
.flash{background:#e7f5ec;border:1px solid #9fd3b1;padding:8px 12px;border-radius:6px;margin:0 0 16px}
.problem{background:#fdecee;border:1px solid #f1a7b1;padding:8px 12px;border-radius:6px;margin:0 0 16px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;background:#e8ecf2}.badge.bad{background:#fde2e5;color:#9b1c2c}.badge.good{background:#e2f4e8;color:#1b6b37}.badge.warn{background:#fff1d6;color:#7a4a00}
form.inline{display:inline}form.filters,form.action{display:flex;flex-wrap:wrap;gap:8px 12px;align-items:flex-end}
label{display:flex;flex-direction:column;font-size:12px;color:#3d4653;gap:2px;min-width:0;max-width:100%}label.check{flex-direction:row;align-items:center;gap:6px;font-size:13px}
input,select,textarea,button{font:inherit;font-size:14px;padding:5px 8px;border:1px solid #b8c0cc;border-radius:4px;background:#fff;max-width:100%}
button{background:#1f3a5f;color:#fff;border-color:#1f3a5f;cursor:pointer}button.danger{background:#a4262c;border-color:#a4262c}button.secondary{background:#fff;color:#1f3a5f}
details.action{border-top:1px solid #e4e8ee;padding:8px 0}details.action summary{cursor:pointer;font-weight:600}
.pager{display:flex;gap:12px;align-items:center;margin-top:8px;flex-wrap:wrap}
.field{display:flex;flex-direction:column;gap:2px;min-width:0;max-width:100%}.finding{color:#b00020;font-size:12px;margin:0;overflow-wrap:anywhere}[aria-invalid=true]{border-color:#b00020;border-width:2px}
figure.chart{margin:0 0 8px}figcaption{font-size:13px;color:#5a6472;margin-bottom:4px}
.plot{position:relative;display:flex;align-items:stretch;gap:2px;height:200px;border-bottom:1px solid #8a93a0;padding:16px 0 0 0}
.ymax{position:absolute;top:0;left:0;font-size:11px;color:#5a6472}
.group{flex:1 1 0;min-width:0;display:flex;flex-direction:column}.bars{flex:1;display:flex;align-items:flex-end;justify-content:center;gap:1px}
.bar{display:block;flex:1 1 0;max-width:36px;min-height:0}.tick{font-size:10px;color:#5a6472;text-align:center;white-space:nowrap;overflow:hidden;height:14px;margin-top:2px}
.legend{display:flex;gap:14px;font-size:12px;margin-top:4px;flex-wrap:wrap}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:4px 14px;margin:0;font-size:14px}dl.facts dt{color:#5a6472}dl.facts dd{margin:0}
.delta.up{color:#1b6b37}.delta.down{color:#9b1c2c}
pre{white-space:pre-wrap;word-break:break-word;font-size:12px;margin:0;max-width:52ch}
@media (max-width:600px){table.stack thead{position:absolute;left:-9999px}table.stack tr{display:block;border-bottom:2px solid #d9dee5;padding:4px 0}
table.stack,table.stack tbody,table.stack caption{display:block}table.stack td pre{text-align:left}table.stack td[colspan]{justify-content:flex-start;text-align:left}table.stack td{display:flex;justify-content:space-between;gap:12px;border:0;padding:3px 4px;text-align:right;overflow-wrap:anywhere;white-space:normal}table.stack td::before{content:attr(data-label);color:#5a6472;text-align:left;font-weight:600;flex:0 0 auto;max-width:45%;overflow-wrap:normal}
form.filters label:not(.check),form.filters .field{flex:1 1 100%}form.filters label:not(.check) input,form.filters label select{width:100%}
main{padding:10px}section{padding:10px}header{padding:8px 10px}.plot{height:150px}.totals b{font-size:16px}}`;

export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title><style>${STYLE}</style></head><body><a class="skip" href="#main">Skip to content</a>${body}</body></html>`;
}

export interface Viewer {
  keyId: string;
  canAct: boolean;
  csrf: string;
}

export type NavItem = 'accounts' | 'reports' | 'health';

/** The signed-in page frame: navigation, who is signed in and with what rights, sign-out. */
export function shell(title: string, viewer: Viewer, current: NavItem | null, body: string): string {
  const nav = (['accounts', 'reports', 'health'] as const)
    .map(
      (n) =>
        `<a href="${n === 'reports' ? '/admin' : `/admin/${n}`}"${n === current ? ' aria-current="page"' : ''}>${n === 'health' ? 'System health' : label(n)}</a>`,
    )
    .join('');
  return page(
    `${title} · Billing admin`,
    `<header><h1>Billing admin</h1><nav aria-label="Main">${nav}</nav><div class="who"><span>key <code>${esc(viewer.keyId)}</code> · ${viewer.canAct ? 'admin' : 'read-only (reports)'}</span>
<form method="post" action="/admin/logout"><input type="hidden" name="csrf" value="${esc(viewer.csrf)}"><button type="submit" class="secondary">Sign out</button></form></div></header>
<main id="main"><h2 class="visually-hidden" style="position:absolute;left:-999px">${esc(title)}</h2>${body}</main>`,
  );
}

/** An error as a page: the contract's code, message and every finding with its field. */
export function problem(error: BillingException): string {
  const findings = error.findings.length
    ? `<ul>${error.findings.map((f) => `<li><code>${esc(f.field)}</code>: ${esc(f.message)}</li>`).join('')}</ul>`
    : '';
  return `<div class="problem" role="alert"><p><strong>${esc(error.message)}</strong> <code>${esc(error.code)}</code></p>${findings}</div>`;
}

export function errorPage(error: BillingException, viewer: Viewer | null, back?: string): string {
  const body = `<section><h2>HTTP ${error.status}</h2>${problem(error)}${back ? `<p><a href="${esc(back)}">Back</a></p>` : ''}</section>`;
  return viewer ? shell('Error', viewer, null, body) : page('Billing admin: error', `<main id="main">${body}</main>`);
}

/** The sign-in form; after a refusal, the reason is tied to the key's field, which has the focus (the key typed is a secret: never sent back). */
export function loginPage(message?: string): string {
  return page(
    'Billing admin: sign in',
    `<header><h1>Billing admin</h1></header><main id="main"><section><h2>Sign in with an API key</h2>
<p>An API key with the <code>admin</code> scope (read and act) or the <code>reports</code> scope (read only).</p>
${message ? `<p class="error" role="alert" id="key-error">${esc(message)}</p>` : ''}
<form method="post" action="/admin/login" class="action"><label for="key">API key <input id="key" type="password" name="key" autocomplete="off" required size="50"${message ? ' aria-describedby="key-error" autofocus' : ''}></label> <button type="submit">Sign in</button></form>
</section></main>`,
  );
}

/** Hidden fields for a form: the CSRF token and the given values. */
export function hidden(fields: Record<string, string | undefined>): string {
  return Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `<input type="hidden" name="${esc(k)}" value="${esc(v)}">`)
    .join('');
}
