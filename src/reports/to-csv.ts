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
