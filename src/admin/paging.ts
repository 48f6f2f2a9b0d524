import type { Finding } from 'src/common/errors/billing.exception';
import type { Paging } from './render';

/**
 * The tables of a console page that can be longer than a page, each by the query parameter of its
 * page: the anchor its links lead back to (its section) and how many rows a page holds. Every row is
 * on some page, none is dropped without a word.
 */
export type PagedTables<K extends string = string> = Record<K, { section: string; size: number }>;
export type TablePages<T extends PagedTables> = Record<keyof T & string, number>;

/**
 * Splits a page's query into the page of each table and the rest (the page's other parameters); a
 * page that is not a whole number from 1 is a finding of the 400 page. A page past the last shows the
 * last (the table knows how many there are).
 */
export function readPages<T extends PagedTables>(
  tables: T,
  query: unknown,
): { rest: Record<string, unknown>; pages: TablePages<T>; findings: Finding[] } {
  const rest: Record<string, unknown> = { ...((typeof query === 'object' && query) || {}) };
  const pages = {} as TablePages<T>;
  const findings: Finding[] = [];
  for (const key of Object.keys(tables) as (keyof T & string)[]) {
    const raw = rest[key];
    delete rest[key];
    pages[key] = 1;
    if (raw === undefined || raw === '') continue;
    if (typeof raw === 'string' && /^[1-9]\d{0,5}$/.test(raw)) pages[key] = Number(raw);
    else findings.push({ field: key, message: 'must be a page number: 1, 2, 3…' });
  }
  return { rest, pages, findings };
}

/**
 * The paging of a page's long tables: for one table, its page and size, and the links to its other
 * pages, which keep the page's other parameters (`kept`: a period, a cursor) and every other table on
 * its page, and lead back to the table's section. `extra`: a link to every row, or for a table read a
 * page at a time, the page read and the count of all its rows.
 */
export function pagingOf<K extends string>(
  path: string,
  tables: PagedTables<K>,
  pages: Record<K, number>,
  kept: Record<string, string | undefined> = {},
): (key: K, extra?: Partial<Pick<Paging, 'all' | 'total' | 'page'>>) => Paging {
  return (key, extra = {}) => ({
    page: pages[key],
    size: tables[key].size,
    href: (n: number) =>
      `${pageUrl(path, { ...kept, ...pageParams({ ...(pages as Record<string, number>), [key]: n }) })}#${tables[key].section}`,
    ...extra,
  });
}

/** The tables' pages as query parameters: a first page is left out. */
export function pageParams(pages: Record<string, number>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(pages)
      .filter(([, v]) => v > 1)
      .map(([k, v]) => [k, String(v)]),
  );
}

/** A path with its query (parameters without a value left out). */
export function pageUrl(path: string, params: Record<string, string | undefined>): string {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) query.set(k, v);
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}
