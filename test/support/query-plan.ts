import type { DataSource } from 'typeorm';

/** A node of PostgreSQL's `EXPLAIN (ANALYZE, FORMAT JSON)` plan, the fields the plan tests read. */
export interface PlanNode {
  'Node Type': string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Rows Removed by Join Filter'?: number;
  Plans?: PlanNode[];
}

/** Rows the scans of a plan read (kept or filtered out), over all their loops. */
export function visited(node: PlanNode | undefined): number {
  if (!node) throw new Error('no plan read');
  const own = /Scan/.test(node['Node Type'])
    ? (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * node['Actual Loops']
    : 0;
  return own + (node.Plans ?? []).reduce((sum, n) => sum + visited(n), 0);
}

/** A data source whose reads also record their plan (EXPLAIN ANALYZE of the same text and values, then the read). */
export function explaining(source: DataSource): { ds: DataSource; plans: PlanNode[] } {
  const plans: PlanNode[] = [];
  const query = async (text: string, values?: unknown[]) => {
    const result = (await source.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values)) as { 'QUERY PLAN': { Plan: PlanNode }[] }[];
    const plan = result[0]?.['QUERY PLAN'][0]?.Plan;
    if (!plan) throw new Error(`no plan for ${text}`);
    plans.push(plan);
    return source.query(text, values) as Promise<unknown>;
  };
  return { ds: { query } as unknown as DataSource, plans };
}
