import { z } from 'zod';

const port = z.coerce.number().int().min(1).max(65535);
/** A bound in ms between `min` and `max`, or 0 for none. */
const boundMs = (min: number, max: number) =>
  z.coerce
    .number()
    .int()
    .refine((v) => v === 0 || (v >= min && v <= max), `must be 0 (no bound) or between ${min} and ${max} ms`);
const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
const brokers = z
  .string()
  .trim()
  .transform((v) =>
    v
      .split(',')
      .map((b) => b.trim())
      .filter((b) => b.length > 0),
  )
  .pipe(z.array(z.string().regex(/^[^:\s]+:\d{1,5}$/, 'each broker must be host:port')).min(1));

/** The contract's topic names: each KAFKA_TOPIC_* default, and where outbox rows go without Kafka. */
export const DEFAULT_TOPICS = {
  lifecycle: 'runtime.lifecycle.v1',
  lifecycleDlq: 'runtime.lifecycle.v1.dlq',
  membership: 'accounts.membership.v1',
  membershipDlq: 'accounts.membership.v1.dlq',
  commands: 'billing.commands.v1',
  notifications: 'billing.notifications.v1',
  ancillary: 'usage.ancillary.v1',
  ancillaryDlq: 'usage.ancillary.v1.dlq',
} as const;

/** Every environment variable the service reads, with its default. Names follow the contract. */
export const envSchema = z.object({
  PORT: port.default(3000),
  HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .refine(isUrlWithHost, 'must be a postgres:// URL with a host (and a port of digits, if any)')
    .optional(),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(2).max(200).default(20),
  /** How many times the service tries to reach the database at start, 3 s apart, before it exits 1 (`startup failed`). */
  DATABASE_START_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(10),
  /** How long the CLI waits for the database to answer before it gives up (exit 3). */
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5_000),
  /** How long a query of a request, a Kafka batch or the outbox relay may go unanswered before it fails (503) and its connection is dropped; 0: no bound. */
  DATABASE_QUERY_TIMEOUT_MS: boundMs(100, 600_000).default(10_000),
  /** The same bound for the jobs, the reports and the CLI (their statements run over many rows); 0: no bound. */
  DATABASE_LONG_QUERY_TIMEOUT_MS: boundMs(1_000, 86_400_000).default(600_000),
  /** How long a query waits for a connection of the pool (all in use) or for a new one to open before it fails (503). */
  DATABASE_ACQUIRE_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(5_000),
  /**
   * How long PostgreSQL lets a connection of the service sit idle inside a transaction before it ends
   * the session (idle_in_transaction_session_timeout): a transaction abandoned by a partition frees
   * its row locks after this, not when TCP notices (hours); 0: no bound.
   */
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: boundMs(1_000, 3_600_000).default(30_000),
  /** Unset: .data/postgres in the project's folder; a relative path set here is from the working directory. */
  EMBEDDED_PG_DIR: z.string().optional(),
  EMBEDDED_PG_PORT: port.default(54329),
  KAFKA_BROKERS: brokers.optional(),
  KAFKA_CLIENT_ID: z.string().min(1).default('dl-billing'),
  KAFKA_GROUP_ID: z.string().min(1).default('dl-billing'),
  /** How long the group waits for a silent consumer before giving its partitions to another. */
  KAFKA_SESSION_TIMEOUT_MS: z.coerce.number().int().min(6_000).max(300_000).default(30_000),
  KAFKA_TOPIC_LIFECYCLE: z.string().min(1).default(DEFAULT_TOPICS.lifecycle),
  KAFKA_TOPIC_LIFECYCLE_DLQ: z.string().min(1).default(DEFAULT_TOPICS.lifecycleDlq),
  KAFKA_TOPIC_MEMBERSHIP: z.string().min(1).default(DEFAULT_TOPICS.membership),
  KAFKA_TOPIC_MEMBERSHIP_DLQ: z.string().min(1).default(DEFAULT_TOPICS.membershipDlq),
  KAFKA_TOPIC_COMMANDS: z.string().min(1).default(DEFAULT_TOPICS.commands),
  KAFKA_TOPIC_NOTIFICATIONS: z.string().min(1).default(DEFAULT_TOPICS.notifications),
  KAFKA_TOPIC_ANCILLARY: z.string().min(1).default(DEFAULT_TOPICS.ancillary),
  KAFKA_TOPIC_ANCILLARY_DLQ: z.string().min(1).default(DEFAULT_TOPICS.ancillaryDlq),
  /** Failed authentications a client address may make per minute before it gets 429s. */
  AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  /** How long an instance trusts what it read of an API key: another instance's revocation takes up to this long here (0: no cache). */
  API_KEY_CACHE_TTL_MS: z.coerce.number().int().min(0).max(60_000).default(5_000),
  /** When set, GET /metrics needs `Authorization: Bearer <this>`; unset, it is open to whoever reaches the port (docs/security.md). */
  METRICS_BEARER_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
  /** When set, /metrics is served on this port alone (on METRICS_HOST), and no longer on PORT. */
  METRICS_PORT: port.optional(),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  BILLING_ADMIN_API_KEY: z.string().min(16, 'must be at least 16 characters').optional(),
  STRIPE_SECRET_KEY: z
    .string()
    .regex(/^(sk|rk)_(test|live)_\S+$/, 'must be a Stripe secret or restricted key (sk_test_…, sk_live_…, rk_…), not a publishable key')
    .optional(),
  STRIPE_WEBHOOK_SECRET: z
    .string()
    .regex(/^whsec_\S+$/, "must be a webhook endpoint's signing secret (whsec_…)")
    .optional(),
  /** Webhook requests with a bad signature a client address may send per minute before it gets 429s
   * (correctly signed events are always accepted). */
  STRIPE_WEBHOOK_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).default(30),
  STRIPE_API_URL: z.url().optional(),
  /** Per-request timeout of Stripe calls, and how many times a failed call is retried (same idempotency key). */
  STRIPE_TIMEOUT_MS: z.coerce.number().int().min(50).max(300_000).default(30_000),
  STRIPE_MAX_NETWORK_RETRIES: z.coerce.number().int().min(0).max(10).default(3),
  /** Proration of seat quantity changes (Stripe's proration_behavior). */
  STRIPE_PRORATION_BEHAVIOR: z.enum(['create_prorations', 'always_invoice', 'none']).default('create_prorations'),
  /** How long a Team account may stay past due before it is suspended. */
  STRIPE_PAST_DUE_GRACE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(7 * 24 * 3_600_000),
  /** Where Checkout sends the user back. */
  STRIPE_CHECKOUT_SUCCESS_URL: z.url().default('https://datalayer.app/billing/top-up/success'),
  STRIPE_CHECKOUT_CANCEL_URL: z.url().default('https://datalayer.app/billing/top-up/cancel'),
  /** How often seat reconciliation and Stripe recovery (missed events, overdue suspensions) run. */
  STRIPE_JOBS_INTERVAL_MS: z.coerce.number().int().min(1_000).default(3_600_000),
  /** Unset: config/plans.json and config/rate-card.json in the project's folder (config.ts, PROJECT_ROOT);
   * a relative path set here is from the working directory. */
  PLANS_FILE: z.string().min(1).optional(),
  RATE_CARD_FILE: z.string().min(1).optional(),
  OUTBOX_RELAY_INTERVAL_MS: z.coerce.number().int().min(10).max(60_000).default(200),
  CRON_ENABLED: flag.default(true),
  /** How often storage (snapshots, volumes) is accrued; each run charges the complete UTC hours. */
  ANCILLARY_ACCRUAL_INTERVAL_MS: z.coerce.number().int().min(1000).max(3_600_000).default(600_000),
  /** How long storage may stay unpaid after the owner is notified before its snapshots are flagged for deletion. */
  ANCILLARY_UNPAID_GRACE_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(72 * 3_600_000),
  /** How often the metering sweeper looks for expired reservations and silent runtimes. */
  SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(10_000),
  /** A terminate command is re-issued after this long while the runtime keeps reporting. */
  TERMINATE_GRACE_MS: z.coerce.number().int().min(0).default(120_000),
  /** With no `runtime.terminated` this long after the first command, the hold is settled anyway. */
  SETTLE_GRACE_MS: z.coerce.number().int().min(0).default(600_000),
  /** A running runtime silent this long is presumed lost. */
  HEARTBEAT_TIMEOUT_MS: z.coerce.number().int().min(1_000).default(600_000),
  /** Test-only fault injection: SIGKILL the process after the Nth event batch is committed to
   * the database and before its Kafka offsets are committed. */
  BILLING_FAULT_KILL_AFTER_BATCH: z.coerce.number().int().min(1).optional(),
});

export type Env = z.output<typeof envSchema>;

/** Whether `value` parses as a URL with a host (a malformed one, `postgres://u:p@[bad/db`, does not). */
function isUrlWithHost(value: string): boolean {
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
}
