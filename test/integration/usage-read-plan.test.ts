import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QuotaReads } from '../../src/plans/plan-reads';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';

// Every launch on a plan with quotas counts the account's usage: its runs of the period and its runtimes that may still
// run. An account with a long history must not make that read go through its history (or the whole table): it reads
// the period's rows and the live ones, whatever came before.
describe('the usage read of a launch, on an account with a long history', () => {
  let db: FreshDatabase;
  const period = { start: new Date('2026-11-01T00:00:00Z'), end: new Date('2026-12-01T00:00:00Z') };

  beforeAll(async () => {
    db = await freshDatabase('usage_plan');
    const insert = (where: string) =>
      db.ds.query(
        `INSERT INTO runtimes (runtime_id, account_id, reservation_id, agent_id, status, settlement, started_at, created_at) ${where}`,
      );
    // Two years of the account's history, settled, before the period.
    await insert(`SELECT 'rt_old_' || g, 'acc_history', 'res_old_' || g, 'agent_' || (g % 7), 'settled', 'terminated',
        timestamptz '2026-11-01' - make_interval(secs => g * 2000), timestamptz '2026-11-01' - make_interval(secs => g * 2000)
      FROM generate_series(1, 30000) g`);
    // 200 runs in the period, 3 of them still running; and one voided as never started that runs after all.
    await insert(`SELECT 'rt_now_' || g, 'acc_history', 'res_now_' || g, 'agent_' || (g % 3),
        CASE WHEN g <= 3 THEN 'running' ELSE 'settled' END, CASE WHEN g <= 3 THEN NULL ELSE 'terminated' END,
        timestamptz '2026-11-02' + make_interval(secs => g * 600), timestamptz '2026-11-02' + make_interval(secs => g * 600)
      FROM generate_series(1, 200) g`);
    await insert(`VALUES ('rt_voided', 'acc_history', 'res_voided', 'agent_0', 'voided', 'never_started',
        timestamptz '2026-10-31 23:50', timestamptz '2026-10-31 23:40')`);
    // The rest of the fleet: 5,000 runtimes of other accounts running now.
    await insert(`SELECT 'rt_fleet_' || g, 'acc_' || (g % 500), 'res_fleet_' || g, NULL, 'running', NULL,
        timestamptz '2026-11-20', timestamptz '2026-11-20'
      FROM generate_series(1, 5000) g`);
    await db.ds.query('ANALYZE runtimes');
  });
  afterAll(() => db?.drop());

  const read = () => new QuotaReads().usage([{ accountId: 'acc_history', period, agents: ['agent_1', 'agent_9'] }]);

  it('counts the period and the live runtimes', async () => {
    const { call, parse } = read();
    const usage = parse(await db.ds.query(call.statement.text, call.values)).get('acc_history');
    expect(usage).toEqual({ runs: 200, agents: 3, active: 4, agentsSeen: new Set(['agent_1']) });
  });

  it('reads the rows of the period and the live ones only, not the history nor the fleet', async () => {
    const { call } = read();
    const found = (await db.ds.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${call.statement.text}`, call.values)) as {
      'QUERY PLAN': { Plan: PlanNode }[];
    }[];
    const scans = nodesOf(found[0]!['QUERY PLAN'][0]!.Plan).filter(
      (n) => n['Relation Name'] === 'runtimes' || /Index Scan/.test(n['Node Type']),
    );
    expect(scans.map((n) => n['Node Type'])).not.toContain('Seq Scan');
    // Index entries visited (bitmap index scans) and rows read from the table (then kept or filtered out).
    const visited = scans.reduce(
      (sum, n) => sum + n['Actual Rows'] + (n['Rows Removed by Filter'] ?? 0) + (n['Rows Removed by Index Recheck'] ?? 0),
      0,
    );
    expect(visited).toBeLessThan(1_000);
  });
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}
