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
