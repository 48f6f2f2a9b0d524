import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { envSchema, type Env } from './config.schema';

/**
 * The project's folder: the nearest one above this file with a package.json (the checkout, or the
 * image's /app; the build in dist/ has none of its own). The default configuration files and the
 * embedded database's folder are found from it, so the service and the CLI started from any
 * working directory read the same ones.
 */
export const PROJECT_ROOT = projectRoot(typeof __dirname === 'string' ? __dirname : process.cwd());

function projectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return process.cwd();
  }
}

/** A path the user set is from their working directory; the default is from the project's folder. */
function pathFrom(set: string | undefined, fallback: string): string {
  return set === undefined ? join(PROJECT_ROOT, fallback) : resolve(set);
}

/** The topics KAFKA_TOPIC_* name (the contract's names by default). */
export interface Topics {
  lifecycle: string;
  lifecycleDlq: string;
  membership: string;
  membershipDlq: string;
  commands: string;
  notifications: string;
  /** Ancillary usage (snapshots, volumes, egress); also accepted on the lifecycle topic. */
  ancillary: string;
  ancillaryDlq: string;
}

export interface KafkaConfig {
  brokers: string[];
  clientId: string;
  groupId: string;
  sessionTimeoutMs: number;
}

export interface AppConfig {
  port: number;
  host: string;
  logLevel: Env['LOG_LEVEL'];
  database: {
    url?: string;
    poolSize: number;
    connectTimeoutMs: number;
    /** Attempts to reach the database at start, 3 s apart, before the start fails (DATABASE_START_ATTEMPTS). */
    startAttempts: number;
    /** The bounds on waiting for the database (common/database/data-source.ts DatabaseTimeouts). */
    queryTimeoutMs: number;
    longQueryTimeoutMs: number;
    acquireTimeoutMs: number;
    idleInTransactionTimeoutMs: number;
    embeddedDir: string;
    embeddedPort: number;
    /** false: the database is not migrated, and one not at this build's schema is refused (the CLI). */
    migrate?: boolean;
  };
  kafka?: KafkaConfig;
  /**
   * Kafka left out on purpose (the CLI, whatever KAFKA_BROKERS says): no warning that it is not
   * configured. Unset: a service without `kafka` warns that events come over HTTP only.
   */
  kafkaLeftOut?: boolean;
  /**
   * The topics KAFKA_TOPIC_* name (the contract's names by default), with Kafka or without: the outbox
   * rows written without it (events over HTTP, the CLI) name these, and wait for a relay that has it.
   */
  topics: Topics;
  adminApiKey?: string;
  authFailuresPerMinute: number;
  /** How long an API key's lookup is cached (API_KEY_CACHE_TTL_MS). */
  apiKeyCacheTtlMs: number;
  metricsBearerToken?: string;
  /** A listener of its own for /metrics (METRICS_PORT, METRICS_HOST); unset: /metrics on the API's port. */
  metricsListener?: { port: number; host: string };
  stripe: {
    secretKey?: string;
    webhookSecret?: string;
    webhookFailuresPerMinute: number;
    apiUrl?: string;
    timeoutMs: number;
    maxNetworkRetries: number;
    prorationBehavior: Env['STRIPE_PRORATION_BEHAVIOR'];
    pastDueGraceMs: number;
    checkoutSuccessUrl: string;
    checkoutCancelUrl: string;
    jobsIntervalMs: number;
  };
  files: { plans: string; rateCard: string };
  outboxRelayIntervalMs: number;
  cronEnabled: boolean;
  ancillary: { accrualIntervalMs: number; unpaidGraceMs: number };
  metering: { sweepIntervalMs: number; terminateGraceMs: number; settleGraceMs: number; heartbeatTimeoutMs: number };
  faults: { killAfterBatch?: number };
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** Reads and validates the environment; throws a ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  }
  const e = parsed.data;
  const topics: Topics = {
    lifecycle: e.KAFKA_TOPIC_LIFECYCLE,
    lifecycleDlq: e.KAFKA_TOPIC_LIFECYCLE_DLQ,
    membership: e.KAFKA_TOPIC_MEMBERSHIP,
    membershipDlq: e.KAFKA_TOPIC_MEMBERSHIP_DLQ,
    commands: e.KAFKA_TOPIC_COMMANDS,
    notifications: e.KAFKA_TOPIC_NOTIFICATIONS,
    ancillary: e.KAFKA_TOPIC_ANCILLARY,
    ancillaryDlq: e.KAFKA_TOPIC_ANCILLARY_DLQ,
  };
  return {
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    database: {
      url: e.DATABASE_URL,
      poolSize: e.DATABASE_POOL_SIZE,
      connectTimeoutMs: e.DATABASE_CONNECT_TIMEOUT_MS,
      startAttempts: e.DATABASE_START_ATTEMPTS,
      queryTimeoutMs: e.DATABASE_QUERY_TIMEOUT_MS,
      longQueryTimeoutMs: e.DATABASE_LONG_QUERY_TIMEOUT_MS,
      acquireTimeoutMs: e.DATABASE_ACQUIRE_TIMEOUT_MS,
      idleInTransactionTimeoutMs: e.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS,
      embeddedDir: pathFrom(e.EMBEDDED_PG_DIR, '.data/postgres'),
      embeddedPort: e.EMBEDDED_PG_PORT,
    },
    kafka: e.KAFKA_BROKERS
      ? {
          brokers: e.KAFKA_BROKERS,
          clientId: e.KAFKA_CLIENT_ID,
          groupId: e.KAFKA_GROUP_ID,
          sessionTimeoutMs: e.KAFKA_SESSION_TIMEOUT_MS,
        }
      : undefined,
    topics,
    adminApiKey: e.BILLING_ADMIN_API_KEY,
    authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE,
    apiKeyCacheTtlMs: e.API_KEY_CACHE_TTL_MS,
    metricsBearerToken: e.METRICS_BEARER_TOKEN,
    metricsListener: e.METRICS_PORT === undefined ? undefined : { port: e.METRICS_PORT, host: e.METRICS_HOST },
    stripe: {
      secretKey: e.STRIPE_SECRET_KEY,
      webhookSecret: e.STRIPE_WEBHOOK_SECRET,
      webhookFailuresPerMinute: e.STRIPE_WEBHOOK_FAILURES_PER_MINUTE,
      apiUrl: e.STRIPE_API_URL,
      timeoutMs: e.STRIPE_TIMEOUT_MS,
      maxNetworkRetries: e.STRIPE_MAX_NETWORK_RETRIES,
      prorationBehavior: e.STRIPE_PRORATION_BEHAVIOR,
      pastDueGraceMs: e.STRIPE_PAST_DUE_GRACE_MS,
      checkoutSuccessUrl: e.STRIPE_CHECKOUT_SUCCESS_URL,
      checkoutCancelUrl: e.STRIPE_CHECKOUT_CANCEL_URL,
      jobsIntervalMs: e.STRIPE_JOBS_INTERVAL_MS,
    },
    files: { plans: pathFrom(e.PLANS_FILE, 'config/plans.json'), rateCard: pathFrom(e.RATE_CARD_FILE, 'config/rate-card.json') },
    outboxRelayIntervalMs: e.OUTBOX_RELAY_INTERVAL_MS,
    cronEnabled: e.CRON_ENABLED,
    ancillary: { accrualIntervalMs: e.ANCILLARY_ACCRUAL_INTERVAL_MS, unpaidGraceMs: e.ANCILLARY_UNPAID_GRACE_MS },
    metering: {
      sweepIntervalMs: e.SWEEP_INTERVAL_MS,
      terminateGraceMs: e.TERMINATE_GRACE_MS,
      settleGraceMs: e.SETTLE_GRACE_MS,
      heartbeatTimeoutMs: e.HEARTBEAT_TIMEOUT_MS,
    },
    faults: { killAfterBatch: e.BILLING_FAULT_KILL_AFTER_BATCH },
  };
}

/** Injection token for AppConfig. */
export const APP_CONFIG = Symbol('APP_CONFIG');
