import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../../src/app';
import { DisabledBus } from '../../src/infra/kafka/disabled-bus';
import { MessageBus, type BusHealth } from '../../src/infra/kafka/message-bus';
import { testConfig } from '../support/app';

/** A broker this instance cannot reach: the producer down, a consumer crashed. */
class BrokerDown extends DisabledBus {
  override health(): BusHealth {
    return { ok: false, detail: 'consumer crashed: runtime.lifecycle.v1' };
  }
}

/**
 * Liveness answers while the process runs; readiness fails only on what stops this instance from
 * serving — the database — and shows Kafka without failing on it (reservations do not need it).
 */
describe('/health/live and /health/ready', () => {
  let app: NestFastifyApplication;

  beforeAll(async () => {
    app = await createTestApp(testConfig(), [{ provide: MessageBus, useValue: new BrokerDown() }]);
  });
  afterAll(() => app.close());

  const get = async (url: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await app.inject({ method: 'GET', url });
    return { status: res.statusCode, body: res.json() };
  };

  it('stay 200 with Kafka down, the broker shown in the readiness body', async () => {
    expect(await get('/health/live')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get('/health/ready')).toEqual({
      status: 200,
      body: {
        status: 'ready',
        checks: { database: { ok: true, detail: 'ok' }, kafka: { ok: false, detail: 'consumer crashed: runtime.lifecycle.v1' } },
      },
    });
  });

  it('readiness answers 503 without the database; liveness still 200 (a restart would not bring it back)', async () => {
    await app.get<DataSource>(getDataSourceToken()).destroy();
    const ready = await get('/health/ready');
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ status: 'not ready', checks: { database: { ok: false } } });
    expect(await get('/health/live')).toEqual({ status: 200, body: { status: 'ok' } });
  });
});
