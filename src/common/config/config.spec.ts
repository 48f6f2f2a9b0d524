import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config';

const ROOT = resolve(__dirname, '../../..');

describe('loadConfig', () => {
  it('uses the contract defaults: port 3000, embedded database, HTTP-only events', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.database.url).toBeUndefined();
    expect(config.kafka).toBeUndefined();
    // From the project's folder, whatever the working directory.
    expect(config.files).toEqual({ plans: join(ROOT, 'config/plans.json'), rateCard: join(ROOT, 'config/rate-card.json') });
    expect(config.database.embeddedDir).toBe(join(ROOT, '.data/postgres'));
  });

  it('takes a relative file path that is set from the working directory', () => {
    const config = loadConfig({ PLANS_FILE: 'my/plans.json', RATE_CARD_FILE: '/etc/card.json', EMBEDDED_PG_DIR: 'pg' });
    expect(config.files).toEqual({ plans: join(process.cwd(), 'my/plans.json'), rateCard: '/etc/card.json' });
    expect(config.database.embeddedDir).toBe(join(process.cwd(), 'pg'));
  });

  it('reads brokers and the contract topic names', () => {
    const config = loadConfig({ KAFKA_BROKERS: '127.0.0.1:9092, broker2:9093' });
    expect(config.kafka?.brokers).toEqual(['127.0.0.1:9092', 'broker2:9093']);
    expect(config.topics).toMatchObject({
      lifecycle: 'runtime.lifecycle.v1',
      lifecycleDlq: 'runtime.lifecycle.v1.dlq',
      commands: 'billing.commands.v1',
      notifications: 'billing.notifications.v1',
      membership: 'accounts.membership.v1',
    });
  });

  it('names every bad variable in one error', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        DATABASE_URL: 'mysql://x',
        KAFKA_BROKERS: 'nohost',
        BILLING_ADMIN_API_KEY: 'short',
        STRIPE_API_URL: 'not a url',
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    for (const name of ['PORT', 'DATABASE_URL', 'KAFKA_BROKERS', 'BILLING_ADMIN_API_KEY', 'STRIPE_API_URL']) {
      expect(message).toContain(name);
    }
  });

  it('refuses a malformed database URL and Stripe keys of the wrong kind, naming each variable', () => {
    for (const [name, value] of [
      ['DATABASE_URL', 'postgres://u:pw@[bad/db'],
      ['DATABASE_URL', 'postgresql://host:notaport/db'],
      ['STRIPE_SECRET_KEY', 'pk_test_publishable'],
      ['STRIPE_SECRET_KEY', 'anything'],
      ['STRIPE_WEBHOOK_SECRET', 'not-a-signing-secret'],
    ] as const) {
      expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}: must be`));
      expect(() => loadConfig({ [name]: value })).not.toThrow(value);
    }
    const good = loadConfig({
      DATABASE_URL: 'postgres://u:pw@db.internal:5432/billing',
      STRIPE_SECRET_KEY: 'rk_live_restricted',
      STRIPE_WEBHOOK_SECRET: 'whsec_abc',
    });
    expect(good.database.url).toBe('postgres://u:pw@db.internal:5432/billing');
  });

  it('bounds the waits for the database by default, takes 0 for no query bound, and refuses a bound too small to mean anything', () => {
    expect(loadConfig({}).database).toMatchObject({
      queryTimeoutMs: 10_000,
      longQueryTimeoutMs: 600_000,
      acquireTimeoutMs: 5_000,
      idleInTransactionTimeoutMs: 30_000,
    });
    expect(loadConfig({ DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '0' }).database.idleInTransactionTimeoutMs).toBe(0);
    expect(loadConfig({ DATABASE_QUERY_TIMEOUT_MS: '0', DATABASE_LONG_QUERY_TIMEOUT_MS: '0' }).database).toMatchObject({
      queryTimeoutMs: 0,
      longQueryTimeoutMs: 0,
    });
    for (const [name, value] of [
      ['DATABASE_QUERY_TIMEOUT_MS', '50'],
      ['DATABASE_QUERY_TIMEOUT_MS', 'soon'],
      ['DATABASE_LONG_QUERY_TIMEOUT_MS', '500'],
      ['DATABASE_ACQUIRE_TIMEOUT_MS', '0'],
      ['DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', '500'],
    ] as const) {
      expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}: `));
    }
  });

  it("caches an API key's lookup 5 s by default, takes another time or 0 for none, and refuses anything else", () => {
    expect(loadConfig({}).apiKeyCacheTtlMs).toBe(5_000);
    expect(loadConfig({ API_KEY_CACHE_TTL_MS: '200' }).apiKeyCacheTtlMs).toBe(200);
    expect(loadConfig({ API_KEY_CACHE_TTL_MS: '0' }).apiKeyCacheTtlMs).toBe(0);
    for (const value of ['-1', '1.5', 'soon', '60001']) {
      expect(() => loadConfig({ API_KEY_CACHE_TTL_MS: value })).toThrow(/API_KEY_CACHE_TTL_MS: /);
    }
  });

  it('treats empty variables as unset', () => {
    expect(loadConfig({ KAFKA_BROKERS: '', DATABASE_URL: '' }).kafka).toBeUndefined();
  });
});
