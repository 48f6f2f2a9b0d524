import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedPostgres } from '../../src/common/database/embedded-postgres';
import { freePort } from '../support/service-process';

/**
 * What an interrupted run leaves behind: a PostgreSQL still running on the data folder (its Node
 * parent was killed), or the port taken. The tests' server takes over; the service's refuses,
 * saying why.
 */
describe('embedded PostgreSQL after an interrupted run', () => {
  const root = mkdtempSync(join(tmpdir(), 'billing-embedded-pg-'));
  chmodSync(root, 0o755);
  const servers: EmbeddedPostgres[] = [];
  let blocker: Server | undefined;

  afterAll(async () => {
    for (const server of servers) await server.stop().catch(() => undefined);
    blocker?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('stops a server left running on the tests’ folder, then starts and serves', async () => {
    const dir = join(root, 'leftover');
    const port = await freePort();
    const orphan = await leaveServerRunning(dir, port);

    const refusing = new EmbeddedPostgres(dir, port, { leftover: 'refuse', portInUse: 'refuse' });
    await expect(refusing.start()).rejects.toThrow(
      new RegExp(`embedded PostgreSQL \\(data in ${dir}, port ${port}\\) did not start: PostgreSQL process ${orphan} is still running`),
    );

    const exitHooks = process.listenerCount('exit');
    const server = new EmbeddedPostgres(dir, port, { leftover: 'stop', portInUse: 'any' });
    servers.push(server);
    const url = await server.start();
    expect(await selectOne(url)).toBe(1);
    expect(Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0])).not.toBe(orphan);
    // Stopped, it leaves no hook on this process behind it (the test files share their process).
    await server.stop();
    expect(process.listenerCount('exit')).toBe(exitHooks);
  });

  it('takes another port when its own is in use, or refuses naming the port', async () => {
    const port = await freePort();
    blocker = createServer().listen(port, '127.0.0.1');
    await new Promise((r) => blocker!.once('listening', r));

    const refusing = new EmbeddedPostgres(join(root, 'refusing'), port, { leftover: 'refuse', portInUse: 'refuse' });
    await expect(refusing.start()).rejects.toThrow(`port ${port} is already in use by another process (set EMBEDDED_PG_PORT`);

    const server = new EmbeddedPostgres(join(root, 'moved'), port, { leftover: 'stop', portInUse: 'any' });
    servers.push(server);
    const url = await server.start();
    expect(new URL(url).port).not.toBe(String(port));
    expect(await selectOne(url)).toBe(1);
  });
});

describe('embedded PostgreSQL and the exit code', () => {
  it('leaves the exit code a process has set (a failed test run exits non-zero)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'billing-embedded-exit-'));
    chmodSync(dir, 0o755);
    try {
      const script = `
        const { EmbeddedPostgres } = await import(${JSON.stringify(join(process.cwd(), 'dist/src/common/database/embedded-postgres.js'))});
        const server = new EmbeddedPostgres(${JSON.stringify(join(dir, 'pg'))}, ${await freePort()});
        await server.start();
        await server.stop();
        process.exitCode = 3;`;
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'inherit' });
      const code = await new Promise((r) => child.once('exit', r));
      expect(code).toBe(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Starts PostgreSQL on `dir` from a child Node process, then kills that process with SIGKILL. */
async function leaveServerRunning(dir: string, port: number): Promise<number> {
  const script = `
    const { EmbeddedPostgres } = await import(${JSON.stringify(join(process.cwd(), 'dist/src/common/database/embedded-postgres.js'))});
    await new EmbeddedPostgres(${JSON.stringify(dir)}, ${port}).start();
    process.stdout.write('ready\\n');
    setInterval(() => undefined, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`the child exited (${code}) before its server was ready`)));
  });
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  return Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

async function selectOne(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ one: number }>('SELECT 1 AS one');
    return rows[0]!.one;
  } finally {
    await client.end();
  }
}
