import { createServer, type Server, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli';

/** The CLI's last stderr line, a pino JSON object. */
function lastLogLine(stderr: string): Record<string, unknown> {
  const lines = stderr.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as Record<string, unknown>;
}

describe('the CLI on an unreachable database', () => {
  const build = resolve('dist');
  const sockets: Socket[] = [];
  let silent: Server | undefined;

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => (silent ? silent.close(r) : r(undefined)));
  });

  it('exits 3 with a JSON log line naming the database it could not reach (refused), never its password', async () => {
    const run = await runCli(build, ['audit', 'verify'], { DATABASE_URL: 'postgres://billing:s3cret-pass@127.0.0.1:1/ledger' });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stdout).toBe('');
    const line = lastLogLine(run.stderr);
    expect(line).toMatchObject({ level: 'error', command: 'audit verify', database: '127.0.0.1:1/ledger', timeoutMs: 5000 });
    expect(line.msg).toMatch(/^could not run audit verify: the database at 127\.0\.0\.1:1\/ledger could not be reached \(.*ECONNREFUSED/);
    expect(run.stderr).not.toContain('s3cret-pass');
  });

  it('gives up after DATABASE_CONNECT_TIMEOUT_MS on a server that accepts the connection and never answers, exit 3', async () => {
    silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((r) => silent!.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const run = await runCli(build, ['ledger', 'reconcile'], {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/billing`,
      DATABASE_CONNECT_TIMEOUT_MS: '1000',
    });
    expect(run.code, run.stderr).toBe(3);
    const line = lastLogLine(run.stderr);
    expect(line).toMatchObject({ level: 'error', command: 'ledger reconcile', database: `127.0.0.1:${port}/billing`, timeoutMs: 1000 });
    expect(String(line.reason)).toMatch(/timeout/i);
    // The server saw the attempt: this is the timeout path, not a refusal.
    expect(sockets.length).toBeGreaterThan(0);
  });

  it('a bad timeout value is a configuration error (exit 2) naming the variable', async () => {
    const run = await runCli(build, ['audit', 'verify'], {
      DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x',
      DATABASE_CONNECT_TIMEOUT_MS: 'soon',
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('DATABASE_CONNECT_TIMEOUT_MS');
  });
});
