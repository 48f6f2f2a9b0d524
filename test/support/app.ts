import { randomBytes, randomInt } from 'node:crypto';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { inject } from 'vitest';
import { createTestApp } from '../../src/app';
import { loadConfig, type AppConfig } from '../../src/common/config/config';
import { ApiKeysService } from '../../src/accounts/auth/api-keys.service';
import { Clock } from '../../src/infra/clock/clock';
import { createBillingClient, type BillingClient } from '../../clients/typescript/src/index';
import { notificationMessageSchema } from '../../src/api-docs/notification-schema';
import { topicsOf } from '../../src/messaging/topics';
import { freshDatabase, type FreshDatabase } from './fresh-database';
import { ResponseChecker } from './openapi-check';

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
    KAFKA_TOPIC_MEMBERSHIP_DLQ: `accounts.membership.v1.${suffix}.dlq`,
    KAFKA_TOPIC_COMMANDS: `billing.commands.v1.${suffix}`,
    KAFKA_TOPIC_NOTIFICATIONS: `billing.notifications.v1.${suffix}`,
    KAFKA_TOPIC_ANCILLARY: `usage.ancillary.v1.${suffix}`,
    KAFKA_TOPIC_ANCILLARY_DLQ: `usage.ancillary.v1.${suffix}.dlq`,
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
  /** Signs in to the admin console with `key`: the session cookie (`name=value`) to send with its pages. */
  consoleSession(key: string): Promise<string>;
  request(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    opts?: { key?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
  /** The typed client (clients/typescript) on this app, with the key given; its responses are checked too. */
  client(key?: string): BillingClient;
  /** Serves the app on a free local port (for a browser or a raw socket): its base URL, `http://127.0.0.1:<port>`. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  kafka?: boolean;
  clock?: Clock;
}

/** A harness on a database of its own; its `close()` drops the database after closing the app. */
export interface FreshHarness extends Harness {
  db: FreshDatabase;
}

function parseBody(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body; // not JSON (metrics, CSV)
  }
}

let shared: ResponseChecker | undefined;

/** The checker of every response a test gets, built from the document the app serves. */
export async function responseChecker(app: NestFastifyApplication): Promise<ResponseChecker> {
  return (shared ??= new ResponseChecker(JSON.parse((await app.inject({ method: 'GET', url: '/openapi.json' })).body)));
}

type InjectOptions = Exclude<Parameters<NestFastifyApplication['inject']>[0], string | undefined>;
type InjectResponse = Awaited<ReturnType<NestFastifyApplication['inject']>>;

/**
 * Every response the app gives a test goes through the checker: the harness' requests, the typed
 * client's, and a test's own `h.app.inject({...})` (raw bodies, odd content types, fuzzing) alike.
 * Answers the unwrapped inject with the same check.
 */
function checkEveryInject(app: NestFastifyApplication, checker: ResponseChecker): (opts: InjectOptions) => Promise<InjectResponse> {
  const raw = app.inject.bind(app) as (opts?: InjectOptions | string) => Promise<InjectResponse>;
  const checked = async (opts: InjectOptions | string): Promise<InjectResponse> => {
    const res = await raw(opts);
    const { method = 'GET', url = '/' } = typeof opts === 'string' ? { url: opts } : opts;
    const path = typeof url === 'string' ? url : (url.pathname ?? '/');
    checker.check(
      String(method).toUpperCase(),
      path,
      res.statusCode,
      res.headers['content-type'] as string | undefined,
      parseBody(res.body),
    );
    return res;
  };
  // The chained form (`inject()` with no options) is left as it is: no test uses it.
  app.inject = ((opts?: InjectOptions | string) => (opts === undefined ? raw() : checked(opts))) as NestFastifyApplication['inject'];
  return checked;
}

export async function startApp(opts: StartOptions = {}): Promise<Harness> {
  const config = testConfig(opts.env, { kafka: opts.kafka });
  const overrides = opts.clock ? [{ provide: Clock, useValue: opts.clock }] : [];
  const app = await createTestApp(config, overrides);
  const ds = app.get<DataSource>(getDataSourceToken());
  const keys = app.get(ApiKeysService);
  const checker = await responseChecker(app);
  const send = checkEveryInject(app, checker);
  const outboxBefore = await lastOutboxId(ds);
  // The failed-authentication limiter counts per client address in the shared database: each
  // harness is a client of its own, so that test files running side by side do not add up.
  const remoteAddress = `127.${randomInt(256)}.${randomInt(256)}.${1 + randomInt(254)}`;
  return {
    app,
    ds,
    config,
    key: async (...scopes) => (await keys.create(scopes, 'test')).key,
    consoleSession: async (key) => {
      const signedIn = await send({
        method: 'POST',
        url: '/admin/login',
        remoteAddress,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ key }).toString(),
      });
      if (signedIn.statusCode !== 303) throw new Error(`console sign-in: ${signedIn.statusCode} ${signedIn.body}`);
      return String(signedIn.headers['set-cookie']).split(';')[0]!;
    },
    request: async (method, url, { key, body, headers = {} } = {}) => {
      const res = await send({
        method,
        url,
        remoteAddress,
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
        ...(body === undefined
          ? {}
          : typeof body === 'string'
            ? {
                payload: body,
                headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
              }
            : { payload: body as object }),
      });
      const parsed = parseBody(res.body);
      return { status: res.statusCode, body: parsed, headers: res.headers };
    },
    client: (key) =>
      createBillingClient({
        baseUrl: 'http://billing.test',
        apiKey: key,
        fetch: async (request) => {
          const url = new URL(request.url);
          const body = request.body ? await request.text() : undefined;
          const res = await send({
            method: request.method as 'GET',
            remoteAddress,
            url: url.pathname + url.search,
            headers: Object.fromEntries(request.headers),
            ...(body === undefined ? {} : { payload: body }),
          });
          const headers = Object.entries(res.headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)] as [string, string]]));
          return new Response(res.body === '' ? null : res.body, { status: res.statusCode, headers });
        },
      }),
    listen: async () => {
      await app.listen(0, '127.0.0.1');
      return (await app.getUrl()).replace('[::1]', '127.0.0.1');
    },
    close: async () => {
      checker.saveExamples();
      const invalid = await invalidNotifications(ds, topicsOf(config).notifications, outboxBefore);
      await app.close();
      if (invalid.length > 0) throw new Error(`notifications that do not match docs/asyncapi.json:\n${invalid.join('\n')}`);
    },
  };
}

/** A started app with an admin key and a control-plane key: the setup most HTTP test files share. */
export async function startAppWithKeys(opts: StartOptions = {}): Promise<{ h: Harness; admin: string; cp: string }> {
  const h = await startApp(opts);
  return { h, admin: await h.key('admin'), cp: await h.key('control-plane') };
}

/**
 * The app on a database of its own, a copy of the run's migrated template (`freshDatabase(prefix)`),
 * for a file whose jobs read whole tables: another file's clock years ahead would settle, void or
 * prune its rows. The harness' `close()` closes the app, then drops the database.
 */
export async function startAppOnFreshDatabase(prefix: string, opts: StartOptions = {}): Promise<FreshHarness> {
  const db = await freshDatabase(prefix);
  let h: Harness;
  try {
    h = await startApp({ ...opts, env: { ...opts.env, DATABASE_URL: db.url } });
  } catch (error) {
    await db.drop();
    throw error;
  }
  return {
    ...h,
    db,
    close: async () => {
      try {
        await h.close();
      } finally {
        await db.drop();
      }
    },
  };
}

async function lastOutboxId(ds: DataSource): Promise<string> {
  return String((await ds.query(`SELECT coalesce(max(id), 0) AS id FROM outbox`))[0].id);
}

/**
 * Every notification the app wrote to the outbox since `after`, held to the schema of its type in
 * the AsyncAPI document (as the responses are to the OpenAPI document): what does not match, with why.
 */
async function invalidNotifications(ds: DataSource, topic: string, after: string): Promise<string[]> {
  const found: { payload: unknown }[] = await ds.query(`SELECT payload FROM outbox WHERE topic = $1 AND id > $2 ORDER BY id`, [
    topic,
    after,
  ]);
  return found.flatMap(({ payload }) => {
    const parsed = notificationMessageSchema.safeParse(payload);
    return parsed.success ? [] : [`${JSON.stringify(payload)}: ${parsed.error.message}`];
  });
}
