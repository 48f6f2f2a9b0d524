import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startApp, type Harness } from '../support/app';
import { buildForTest, removeBuild, runCli } from '../support/cli';
import { tempDir } from '../support/temp-dir';

const T0 = new Date('2033-07-08T12:00:00.000Z');
const PERIOD = ['--from', '2033-07-01T00:00:00Z', '--to', '2033-08-01T00:00:00Z'];

/** `cli reports …` as a real process: the same CSV as the HTTP report, progress on stderr, usage errors exit 2. */
describe('reports from the CLI', () => {
  let h: Harness;
  let build: string;
  let admin: string;
  const env = () => ({ DATABASE_URL: inject('databaseUrl'), LOG_LEVEL: 'warn' });

  beforeAll(async () => {
    [h, build] = await Promise.all([startApp({ clock: new ManualClock(T0) }), buildForTest()]);
    admin = await h.key('admin');
    const cp = await h.key('control-plane');
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: 'rt_cli_1', ...SMALL, minutes: 60 } });
    await h.request('POST', '/v1/events', {
      key: cp,
      body: [
        lifecycle(accountId, 'rt_cli_1', 'runtime.started', T0, 1),
        lifecycle(accountId, 'rt_cli_1', 'runtime.terminated', new Date(T0.getTime() + 42 * 60_000), 2, { reason: 'user' }),
      ],
    });
  });
  afterAll(async () => {
    await h?.close();
    if (build) await removeBuild(build);
  });

  it('writes the usage report as the same CSV the API serves', async () => {
    const out = join(tempDir('reports-cli-'), 'usage.csv');
    const run = await runCli(build, ['reports', 'usage', ...PERIOD, '--group-by', 'environment', '--out', out], env());
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/usage by environment over .*reading the rollups/);
    expect(run.stderr).toContain(`written ${out}`);
    // Its log is JSON, one object a line, each naming the command.
    const lines = run.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines) expect(line).toMatchObject({ level: 'info', command: 'reports usage', pid: expect.any(Number) });
    const api = await h.request(
      'GET',
      '/v1/reports/usage?from=2033-07-01T00:00:00Z&to=2033-08-01T00:00:00Z&groupBy=environment&format=csv',
      { key: admin },
    );
    expect(readFileSync(out, 'utf8')).toBe(api.body);
    expect(api.body).toContain('python-simple,1,2520,0.700000');
  });

  it('prints to stdout with --out -, and exits 2 on a bad period or an unknown report', async () => {
    const credits = await runCli(build, ['reports', 'credits', ...PERIOD, '--group-by', 'total', '--out', '-'], env());
    expect(credits.code, credits.stderr).toBe(0);
    expect(credits.stdout.split('\r\n')[1]).toMatch(/^10\.000000,0\.000000,0\.000000,0\.700000,/);
    const cut = await runCli(build, ['reports', 'usage', '--from', '2033-07-01T00:30:00Z'], env());
    expect(cut.code).toBe(2);
    expect(cut.stderr).toContain('--from: usage is kept per UTC hour');
    expect((await runCli(build, ['reports', 'nope'], env())).code).toBe(2);
  });
});
