import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildForTest, removeBuild, runBuilt } from '../support/cli';

/**
 * `npm run demo`, as the README offers it to a new user: the demo script (built here, beside the run's
 * dist/, which it starts as the service on embedded defaults) walks every plan, a quota, a spend limit
 * and the reports through the typed client, and exits 0 with what it did on stdout.
 */
describe('npm run demo', () => {
  let build = '';
  beforeAll(async () => {
    build = await buildForTest(['scripts', 'clients/typescript/src']);
  });
  afterAll(() => removeBuild(build));

  it('runs every step against a fresh embedded service and prints the outcomes a user reads', async () => {
    // The demo starts its service on its own defaults, without the run's DATABASE_URL and KAFKA_BROKERS.
    const run = await runBuilt(build, 'scripts/demo.js', [], {}, { timeoutMs: 180_000 });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.split('\n').map((l) => l.trim().replace(/\s+/g, ' '));
    for (const line of [
      'demo_rt_1 demo_free_ada small reserved 1.000000 → settled, charged 0.416667 for 25 min',
      'launch 3: 429 DL_BILLING_QUOTA_EXCEEDED (concurrency) The Free plan allows 2 runtimes at once; 2 are active',
      'large: 403 DL_BILLING_PLAN_FORBIDS The account plan does not allow this environment',
      'one more hour of medium: 402 DL_BILLING_SPEND_LIMIT_REACHED This would pass the account spend limit of 3.000000 credits this month',
      'demo_ent_long is now terminating; commands: runtime.terminate (spend_limit)',
      'total 5 runtimes 10800 s 5.000002 credits',
      'credits granted 250.000000, consumed 5.000002, refunded 0.000000, expired 0.000000, net 244.999998',
      '1,demo_team_acme,Acme (Team),team,3,6000,2.750001',
    ]) {
      expect(lines, line).toContain(line);
    }
    expect(run.stdout).toMatch(/\nDone in \d+\.\d s\.\n/);
  });
});
