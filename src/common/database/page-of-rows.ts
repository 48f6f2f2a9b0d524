import type { EntityManager } from 'typeorm';
import { rows } from './transaction';

/** One page of a read's rows, the page it is (a page past the last is the last) and how many rows the read has in all. */
export interface RowsPage<T> {
  items: T[];
  page: number;
  total: number;
}

/** Where a page starts and how many rows it holds: `page` from 1. */
export interface PageRequest {
  page: number;
  size: number;
}

/**
 * Page `page` of `size` rows of `select` (a SELECT without ORDER BY, its parameters `$1…` in
 * `params`) in the order `orderBy` (its output columns, ending on a unique key so that no row is on
 * two pages), with the count of all its rows, in one statement. A page past the last is the last, so
 * every row can be reached and the count is the read's true total, never the page's.
 */
export async function pageOfRows<T>(
  db: Pick<EntityManager, 'query'>,
  select: string,
  params: unknown[],
  orderBy: string,
  { page, size }: PageRequest,
): Promise<RowsPage<T>> {
  const p = `$${params.length + 1}::bigint`;
  const s = `$${params.length + 2}::bigint`;
  const shown = `least(${p}, greatest(1, (row_total + ${s} - 1) / ${s}))`;
  const found = await rows<T & { row_n: string; row_total: string }>(
    db,
    `SELECT * FROM (
       SELECT q.*, row_number() OVER (ORDER BY ${orderBy}) AS row_n, count(*) OVER () AS row_total FROM (${select}) q
     ) numbered
     WHERE row_n > (${shown} - 1) * ${s} AND row_n <= ${shown} * ${s}
     ORDER BY row_n`,
    [...params, page, size],
  );
  const total = Number(found[0]?.row_total ?? 0);
  return {
    items: found.map(({ row_n: _n, row_total: _total, ...row }) => row as unknown as T),
    page: Math.min(page, Math.max(1, Math.ceil(total / size))),
    total,
  };
}
