import { spawn } from 'node:child_process';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';
import { FrozenProxy } from '../support/frozen-proxy';
import { startService, type ServiceProcess } from '../support/service-process';

const ADMIN_KEY = 'log-lines-admin-key-0123456789';

/**
 * docs/operations.md, "Logs": one JSON object a line. A log shipper parses every line the process
 * writes, on stdout and stderr alike; a line of plain text (a runtime warning printed by Node) is
 * one it cannot parse.
 */
describe("the service's output", () => {
  let db: FreshDatabase | undefined;
  let service: ServiceProcess | undefined;
  afterAll(async () => {
    await service?.stop();
    await db?.drop();
  });

  it('is one JSON object a line, from start to stop, stderr included', async () => {
    db = await freshDatabase('loglines');
    service = await startService({ DATABASE_URL: db.url, KAFKA_BROKERS: '', BILLING_ADMIN_API_KEY: ADMIN_KEY, LOG_LEVEL: 'info' });
    const wallet = await fetch(`http://127.0.0.1:${service.port}/v1/accounts/acc_nobody/wallet`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(wallet.status).toBe(404);
    await service.stop();
    expect(await service.exited).toEqual({ code: 0, signal: null });

    const lines = service
      .output()
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(lines.filter((l) => !isJsonObject(l))).toEqual([]);
    expect(lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
    expect(lines.some((l) => l.includes('"msg":"request"') && l.includes('"status":404'))).toBe(true);
    // Without KAFKA_BROKERS the service warns that it runs without Kafka (the CLI, which leaves it out on purpose, does not).
    const warnings = lines.map((l) => JSON.parse(l) as { level: string; msg: string }).filter((l) => l.level === 'warn');
    expect(warnings.map((l) => l.msg)).toEqual(
      expect.arrayContaining([
        'KAFKA_BROKERS is not set: lifecycle events are taken over HTTP only (POST /v1/events)',
        'Kafka is not configured: outbox messages stay in the outbox table',
      ]),
    );
  });

  it('says that a query failed in a JSON line too (a database that stops answering)', async () => {
    const own = await freshDatabase('loglines_frozen');
    const proxy = await FrozenProxy.start(own.url);
    const frozenService = await startService({
      DATABASE_URL: proxy.url(),
      KAFKA_BROKERS: '',
      BILLING_ADMIN_API_KEY: ADMIN_KEY,
      LOG_LEVEL: 'info',
      DATABASE_QUERY_TIMEOUT_MS: '1000',
      DATABASE_ACQUIRE_TIMEOUT_MS: '1000',
    });
    try {
      proxy.freeze();
      const wallet = await fetch(`http://127.0.0.1:${frozenService.port}/v1/accounts/acc_nobody/wallet`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(wallet.status).toBe(503);
      proxy.thaw();
      await frozenService.stop();
    } finally {
      await frozenService.stop();
      await proxy.close();
      await own.drop();
    }
    const lines = frozenService
      .output()
      .split('\n')
      .filter((l) => l.trim() !== '');
    expect(lines.filter((l) => !isJsonObject(l))).toEqual([]);
    expect(lines.some((l) => l.includes('query failed: Query read timeout'))).toBe(true);
  });

  it('names every bad configuration file at once, in one fatal JSON line on stderr, before anything starts', async () => {
    const child = spawn(process.execPath, ['dist/src/main.js'], {
      env: {
        ...process.env,
        PORT: '',
        DATABASE_URL: inject('databaseUrl'),
        KAFKA_BROKERS: '',
        PLANS_FILE: '/nonexistent/plans.json',
        RATE_CARD_FILE: '/nonexistent/rate-card.json',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    const lines = stderr.split('\n').filter((l) => l.trim() !== '');
    expect(lines).toHaveLength(1);
    const fatal = JSON.parse(lines[0]!) as { level: string; msg: string };
    expect(fatal.level).toBe('fatal');
    expect(fatal.msg).toMatch(/^startup failed: /);
    expect(fatal.msg).toContain('PLANS_FILE: cannot read /nonexistent/plans.json');
    expect(fatal.msg).toContain('RATE_CARD_FILE: cannot read /nonexistent/rate-card.json');
    expect(stdout).toBe('');
  });
});

function isJsonObject(line: string): boolean {
  try {
    const parsed: unknown = JSON.parse(line);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  } catch {
    return false;
  }
}
