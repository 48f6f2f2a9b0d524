import type { Cell, Report } from './reports.service';

/** RFC 4180 CSV: the columns as header, one line per item; fields quoted when they need it. */
export function toCsv(report: Pick<Report, 'columns' | 'items'>): string {
  const field = (v: Cell | undefined): string => {
    if (v === null || v === undefined) return '';
    const s = String(v);
    // A leading =, +, -, @, TAB or CR makes a spreadsheet read a formula (OWASP, CSV injection):
    // such text gets a leading apostrophe; a plain number (e.g. a negative amount) stays a number.
    const safe = /^[=+\-@\t\r]/.test(s) && !/^-?\d+(\.\d+)?$/.test(s) ? `'${s}` : s;
    return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  const lines = [report.columns.map(field).join(','), ...report.items.map((i) => report.columns.map((c) => field(i[c])).join(','))];
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * Whether a request asks for CSV: `format=csv`, or without `format` an `Accept` header that weighs
 * `text/csv` at least as high as JSON (`text/csv;q=0.5, application/json` is JSON; a tie is CSV).
 */
export function wantsCsv(format: string | undefined, accept: string | undefined): boolean {
  if (format !== undefined) return format === 'csv';
  let csv = 0;
  let json = 0;
  for (const range of (accept ?? '').toLowerCase().split(',')) {
    const [type, ...params] = range.split(';').map((p) => p.trim());
    const weight = params.find((p) => p.startsWith('q='));
    const q = weight === undefined ? 1 : Number(weight.slice(2));
    if (!Number.isFinite(q)) continue;
    if (type === 'text/csv') csv = Math.max(csv, q);
    else if (type === 'application/json') json = Math.max(json, q);
  }
  return csv > 0 && csv >= json;
}
