import type { Cell, Report } from '../reports/reports.service';

/** Escapes text for HTML content and attribute values. */
export function esc(value: Cell | undefined): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export interface Series {
  name: string;
  color: string;
  values: number[];
}

/**
 * A bar chart as inline SVG, drawn on the server: one group of bars per label, one bar per series,
 * heights proportional to the largest value. Each bar carries its value (`data-value`) and a title.
 */
export function barChart(id: string, title: string, labels: string[], series: Series[], unit = ''): string {
  const width = 720;
  const height = 240;
  const top = 20;
  const bottom = 50;
  const left = 60;
  const plot = height - top - bottom;
  const max = Math.max(0, ...series.flatMap((s) => s.values));
  const scale = max > 0 ? plot / max : 0;
  const slot = labels.length > 0 ? (width - left - 10) / labels.length : 0;
  const bar = Math.max(1, (slot * 0.8) / Math.max(1, series.length));
  const bars: string[] = [];
  labels.forEach((label, i) => {
    series.forEach((s, j) => {
      const v = s.values[i] ?? 0;
      const h = Math.round(v * scale * 100) / 100;
      const x = Math.round((left + i * slot + slot * 0.1 + j * bar) * 100) / 100;
      bars.push(
        `<rect class="bar" data-series="${esc(s.name)}" data-label="${esc(label)}" data-value="${v}" x="${x}" y="${top + plot - h}" width="${Math.round(bar * 100) / 100}" height="${h}" fill="${s.color}"><title>${esc(label)} · ${esc(s.name)}: ${esc(formatNumber(v))}${esc(unit)}</title></rect>`,
      );
    });
  });
  const every = Math.max(1, Math.ceil(labels.length / 12));
  const ticks = labels
    .map((label, i) =>
      i % every === 0
        ? `<text x="${Math.round(left + i * slot + slot / 2)}" y="${height - bottom + 16}" text-anchor="middle" font-size="10">${esc(label.length > 12 ? `${label.slice(0, 11)}…` : label)}</text>`
        : '',
    )
    .join('');
  const legend = series
    .map((s, i) => `<rect x="${left + i * 140}" y="${height - 18}" width="10" height="10" fill="${s.color}"/><text x="${left + i * 140 + 14}" y="${height - 9}" font-size="11">${esc(s.name)}</text>`)
    .join('');
  const axis = `<line x1="${left}" y1="${top + plot}" x2="${width - 10}" y2="${top + plot}" stroke="#888"/><text x="${left - 6}" y="${top + 4}" text-anchor="end" font-size="10">${esc(formatNumber(max))}</text><text x="${left - 6}" y="${top + plot}" text-anchor="end" font-size="10">0</text>`;
  const empty = labels.length === 0 ? `<text x="${width / 2}" y="${top + plot / 2}" text-anchor="middle" fill="#888">no data in this period</text>` : '';
  return `<figure><figcaption>${esc(title)}</figcaption><svg id="${esc(id)}" role="img" aria-label="${esc(title)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg">${axis}${bars.join('')}${ticks}${legend}${empty}</svg></figure>`;
}

function formatNumber(v: number): string {
  return Number.isInteger(v) ? String(v) : v.toFixed(2);
}

/** A report's items as an HTML table (the columns the report names). */
export function table(id: string, report: Pick<Report, 'columns' | 'items'>, limit = 50): string {
  const head = report.columns.map((c) => `<th>${esc(c)}</th>`).join('');
  const body = report.items
    .slice(0, limit)
    .map((i) => `<tr>${report.columns.map((c) => `<td>${esc(i[c])}</td>`).join('')}</tr>`)
    .join('');
  const more = report.items.length > limit ? `<p class="more">${report.items.length - limit} more rows: download the CSV.</p>` : '';
  return `<table id="${esc(id)}"><thead><tr>${head}</tr></thead><tbody>${body || `<tr><td colspan="${report.columns.length}">none</td></tr>`}</tbody></table>${more}`;
}

const STYLE = `body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#1f3a5f;color:#fff;padding:12px 24px;display:flex;justify-content:space-between;align-items:center}
header form{margin:0}main{padding:16px 24px;max-width:1100px}section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:12px 16px;margin:0 0 16px}
h1{font-size:20px;margin:0}h2{font-size:16px;margin:0 0 8px}figure{margin:0}figcaption{font-size:13px;color:#555;margin-bottom:4px}
table{border-collapse:collapse;font-size:12px;margin-top:8px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left}
.totals{display:flex;gap:24px;flex-wrap:wrap;font-size:13px}.totals b{font-size:18px;display:block}.error{color:#b00020}
a.csv{font-size:12px;margin-left:8px}`;

export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${esc(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

export function loginPage(message?: string): string {
  return page(
    'Billing admin: sign in',
    `<header><h1>Billing admin</h1></header><main><section><h2>Sign in with an API key</h2>
<p>An API key with the <code>admin</code> or <code>reports</code> scope.</p>
${message ? `<p class="error" role="alert">${esc(message)}</p>` : ''}
<form method="post" action="/admin/login"><label>API key <input type="password" name="key" autocomplete="off" required size="60"></label> <button type="submit">Sign in</button></form>
</section></main>`,
  );
}
