import { randomBytes } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { inject } from 'vitest';
import { createTestApp } from '../../src/app';
import { loadConfig, type AppConfig } from '../../src/common/config/config';
import { ApiKeysService } from '../../src/accounts/auth/api-keys.service';
import { Clock } from '../../src/infra/clock/clock';

export function uid(prefix = 'x'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Environment for Kafka with a consumer group and topics of its own (so test files never share them). */
export function kafkaTestEnv(): Record<string, string> {
  const suffix = randomBytes(4).toString('hex');
  return {
    KAFKA_BROKERS: inject('kafkaBrokers'),
    KAFKA_GROUP_ID: `billing-test-${suffix}`,
    KAFKA_TOPIC_LIFECYCLE: `runtime.lifecycle.v1.${suffix}`,
    KAFKA_TOPIC_LIFECYCLE_DLQ: `runtime.lifecycle.v1.${suffix}.dlq`,
    KAFKA_TOPIC_MEMBERSHIP: `accounts.membership.v1.${suffix}`,
    KAFKA_TOPIC_COMMANDS: `billing.commands.v1.${suffix}`,
    KAFKA_TOPIC_NOTIFICATIONS: `billing.notifications.v1.${suffix}`,
  };
}

/** Environment for a service process on the run's database and its own Kafka group and topics. */
export function serviceTestEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: inject('databaseUrl'),
    LOG_LEVEL: 'warn',
    ...kafkaTestEnv(),
    // A killed instance's group membership must lapse soon for a restarted one to get its partitions.
    KAFKA_SESSION_TIMEOUT_MS: '6000',
    ...extra,
  };
}

/** Configuration for a test app on the run's database; Kafka only when asked, with topics of its own. */
export function testConfig(env: Record<string, string> = {}, opts: { kafka?: boolean } = {}): AppConfig {
  return loadConfig({
    DATABASE_URL: inject('databaseUrl'),
    DATABASE_POOL_SIZE: '10',
    LOG_LEVEL: 'warn',
    CRON_ENABLED: 'false',
    OUTBOX_RELAY_INTERVAL_MS: '50',
    ...(opts.kafka ? kafkaTestEnv() : {}),
    ...env,
  });
}

export interface Harness {
  app: NestFastifyApplication;
  ds: DataSource;
  config: AppConfig;
  /** An API key with the given scopes. */
  key(...scopes: string[]): Promise<string>;
  request(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    opts?: { key?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
  close(): Promise<void>;
}

export async function startApp(
  opts: { env?: Record<string, string>; kafka?: boolean; clock?: Clock } = {},
): Promise<Harness> {
  const config = testConfig(opts.env, { kafka: opts.kafka });
  const overrides = opts.clock ? [{ provide: Clock, useValue: opts.clock }] : [];
  const app = await createTestApp(config, overrides);
  const ds = app.get<DataSource>(getDataSourceToken());
  const keys = app.get(ApiKeysService);
  return {
    app,
    ds,
    config,
    key: async (...scopes) => (await keys.create(scopes, 'test')).key,
    request: async (method, url, { key, body, headers = {} } = {}) => {
      const res = await app.inject({
        method,
        url,
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
        ...(body === undefined ? {} : typeof body === 'string' ? { payload: body, headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers } } : { payload: body as object }),
      });
      let parsed: unknown = res.body;
      try {
        parsed = JSON.parse(res.body);
      } catch {
        // not JSON (metrics, CSV)
      }
      return { status: res.statusCode, body: parsed, headers: res.headers };
    },
    close: () => app.close(),
  };
}
