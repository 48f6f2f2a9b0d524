import { copyFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';
import { startService, type ServiceProcess } from '../support/service-process';
import { tempDir } from '../support/temp-dir';

/**
 * docs/operations.md, "Configuration files": the default plan catalog and rate card are the
 * project's, whatever the working directory; a relative path set in PLANS_FILE is from it.
 */
describe('the service and the CLI started from another working directory', () => {
  const build = resolve('dist');
  let db: FreshDatabase;
  let elsewhere: string;
  let service: ServiceProcess | undefined;

  beforeAll(async () => {
    db = await freshDatabase('workdir');
    elsewhere = tempDir('dl-billing-cwd-');
  });
  afterAll(async () => {
    await service?.stop();
    await db?.drop();
  });

  it('the service finds its default plan catalog and rate card, and starts', async () => {
    service = await startService({ DATABASE_URL: db.url, KAFKA_BROKERS: '' }, 60_000, true, 'dist/src/main.js', elsewhere);
    await service.stop();
    expect(await service.exited).toEqual({ code: 0, signal: null });
  });

  it('the CLI finds the default plan catalog (reports usage, exit 0)', async () => {
    const run = await runCli(build, ['reports', 'usage'], { DATABASE_URL: db.url }, elsewhere);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^account,/);
  });

  it('reads a relative PLANS_FILE from the working directory, and names the full path it could not read', async () => {
    copyFileSync('config/plans.json', join(elsewhere, 'my-plans.json'));
    const own = await runCli(build, ['reports', 'usage'], { DATABASE_URL: db.url, PLANS_FILE: 'my-plans.json' }, elsewhere);
    expect(own.code, own.stderr).toBe(0);
    const missing = await runCli(build, ['reports', 'usage'], { DATABASE_URL: db.url, PLANS_FILE: 'nope.json' }, elsewhere);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`PLANS_FILE: cannot read ${join(elsewhere, 'nope.json')}`);
  });
});
