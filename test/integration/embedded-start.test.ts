import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, startService, type ServiceProcess } from '../support/service-process';

describe('starting on embedded defaults', () => {
  const dir = mkdtempSync(join(tmpdir(), 'billing-embedded-'));
  // As root, PostgreSQL runs as a `postgres` user, which must be able to reach the data folder.
  chmodSync(dir, 0o755);
  let service: ServiceProcess | undefined;

  afterAll(async () => {
    await service?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves /health/ready with an embedded PostgreSQL and no Kafka, and says so in its log', async () => {
    // Empty values count as unset: no DATABASE_URL (embedded PostgreSQL), no KAFKA_BROKERS (HTTP only).
    const env: Record<string, string> = { EMBEDDED_PG_DIR: join(dir, 'pg'), EMBEDDED_PG_PORT: String(await freePort()), LOG_LEVEL: 'info' };
    service = await startService({ ...env, DATABASE_URL: '', KAFKA_BROKERS: '' });
    const ready = await fetch(`http://127.0.0.1:${service.port}/health/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { database: { ok: true } } });
    expect(service.output()).toContain(`data in ${join(dir, 'pg')}`);
    expect(service.output()).toContain('lifecycle events are taken over HTTP only');
  });

  it('refuses to start on a bad configuration value, naming it', async () => {
    await expect(startService({ PORT: '', DATABASE_URL: 'mysql://nope', KAFKA_BROKERS: '' }, 20_000)).rejects.toThrow(/DATABASE_URL/);
  });
});
