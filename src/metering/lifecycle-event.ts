import { z } from 'zod';
import { ACCOUNT_ID_PATTERN } from 'src/common/auth/scopes';
import type { Finding } from 'src/common/errors/billing.exception';
import { jsonTextOf } from 'src/common/json-limits';
import { messageValidator } from 'src/common/http/zod-validation.pipe';
import { EVENT_EARLIEST, EVENT_TIME_RULE, FUTURE_TOLERANCE_MS } from 'src/common/http/api-schemas';

export const LIFECYCLE_TYPES = [
  'runtime.started',
  'runtime.paused',
  'runtime.resumed',
  'runtime.heartbeat',
  'runtime.terminated',
  'runtime.launch_failed',
] as const;
export type LifecycleType = (typeof LIFECYCLE_TYPES)[number];

/**
 * The reasons the contract names for `runtime.terminated`: the control plane's own and those of our
 * `runtime.terminate` commands. Any other reason is accepted too and recorded as given (an event is a
 * fact, its reason a label); this list documents, it does not filter.
 */
export const TERMINATION_REASONS = [
  'user',
  'culled',
  'expired',
  'anomaly',
  'unreachable',
  'spend_limit',
  'admin',
  'reservation_expired',
  'account_suspended',
  'unreserved',
] as const;

/** A reason is a label: 1-500 characters, like a launch failure's. */
export const MAX_REASON_LENGTH = 500;

const id = z.string().regex(ACCOUNT_ID_PATTERN, 'must be 1-128 characters of letters, digits and _.:-');

export function lifecycleEventSchema(now: () => Date) {
  return z
    .strictObject({
      id: z.string().min(1).max(200),
      type: z.enum(LIFECYCLE_TYPES),
      occurredAt: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).refine((v) => {
        const t = Date.parse(v);
        return t >= EVENT_EARLIEST && t <= now().getTime() + FUTURE_TOLERANCE_MS;
      }, EVENT_TIME_RULE),
      accountId: id,
      runtimeId: id,
      seq: z.number().int('must be an integer').min(0, 'must not be negative').max(Number.MAX_SAFE_INTEGER),
      data: z.record(z.string(), z.unknown()).default({}),
    })
    .superRefine((e, ctx) => {
      // The data the contract gives a meaning to is checked; other keys in data are kept as sent (a
      // control plane may add some, and refusing a pause for one would charge the paused time).
      const reason = e.data.reason;
      const ends = e.type === 'runtime.terminated' || e.type === 'runtime.launch_failed';
      if (ends && (typeof reason !== 'string' || reason.length === 0 || reason.length > MAX_REASON_LENGTH)) {
        ctx.addIssue({ code: 'custom', path: ['data', 'reason'], message: `must be a string of 1-${MAX_REASON_LENGTH} characters` });
      }
    });
}

export interface LifecycleEvent {
  id: string;
  type: LifecycleType;
  occurredAt: Date;
  accountId: string;
  runtimeId: string;
  seq: number;
  data: Record<string, unknown>;
}

export type ParseResult = { ok: true; event: LifecycleEvent } | { ok: false; reason: string; findings: Finding[] };

export type LifecycleValidator = (value: unknown, prefix?: string) => ParseResult;

/**
 * A validator for events (already parsed from JSON), with its schema built once; every finding is
 * named by its field. `now` bounds how far in the future an event may be stamped.
 */
export function lifecycleValidator(now: () => Date): LifecycleValidator {
  const schema = messageValidator(lifecycleEventSchema(now), (e) => ({ ...e, occurredAt: new Date(e.occurredAt) }));
  // Every event of the stream goes through here: the ones that plainly pass are checked directly
  // (the schema's own rules, a tenth of its cost); anything else goes to the schema, for its findings.
  return (value, prefix) => {
    const event = plainlyValid(value, now);
    return event ? { ok: true, event } : schema(value, prefix);
  };
}

/** The schema's date-time pattern (z.iso.datetime with an offset). */
const DATE_TIME = z.regexes.datetime({ offset: true });
const TYPES: ReadonlySet<string> = new Set(LIFECYCLE_TYPES);
const KEYS: ReadonlySet<string> = new Set(['id', 'type', 'occurredAt', 'accountId', 'runtimeId', 'seq', 'data']);

/**
 * The event `value` stands for when it passes every rule of lifecycleEventSchema, checked
 * directly; null when it does not or may not (the schema then decides and names the findings).
 * It never accepts what the schema refuses, and gives what the schema's parse gives.
 */
export function plainlyValid(value: unknown, now: () => Date): LifecycleEvent | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  for (const key of Object.keys(v)) if (!KEYS.has(key)) return null;
  const { id, type, occurredAt, accountId, runtimeId, seq, data } = v;
  if (typeof id !== 'string' || id.length < 1 || id.length > 200) return null;
  if (typeof type !== 'string' || !TYPES.has(type)) return null;
  if (typeof occurredAt !== 'string' || !DATE_TIME.test(occurredAt)) return null;
  const at = Date.parse(occurredAt);
  if (!(at >= EVENT_EARLIEST && at <= now().getTime() + FUTURE_TOLERANCE_MS)) return null;
  if (typeof accountId !== 'string' || !ACCOUNT_ID_PATTERN.test(accountId)) return null;
  if (typeof runtimeId !== 'string' || !ACCOUNT_ID_PATTERN.test(runtimeId)) return null;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) return null;
  let fields: Record<string, unknown> = {};
  if (data !== undefined) {
    if (typeof data !== 'object' || data === null || Array.isArray(data) || Object.getPrototypeOf(data) !== Object.prototype) return null;
    if (Object.prototype.hasOwnProperty.call(data, '__proto__')) return null;
    fields = { ...(data as Record<string, unknown>) };
  }
  if (type === 'runtime.terminated' || type === 'runtime.launch_failed') {
    const reason = fields.reason;
    if (typeof reason !== 'string' || reason.length === 0 || reason.length > MAX_REASON_LENGTH) return null;
  }
  return { id, type: type as LifecycleType, occurredAt: new Date(occurredAt), accountId, runtimeId, seq, data: fields };
}

/** A lifecycle event is a few hundred bytes; a message far larger is not one. */
export const MAX_MESSAGE_BYTES = 1024 * 1024;

/** Parses a Kafka message value: the JSON limits, then JSON, then the schema. */
export function parseLifecycleMessage(value: Buffer | null, validate: LifecycleValidator): ParseResult {
  if (value === null || value.length === 0) {
    return { ok: false, reason: 'empty message', findings: [{ field: 'value', message: 'is empty' }] };
  }
  if (value.length > MAX_MESSAGE_BYTES) {
    return {
      ok: false,
      reason: `too large: ${value.length} bytes`,
      findings: [{ field: 'value', message: `must be at most ${MAX_MESSAGE_BYTES} bytes` }],
    };
  }
  // Checked on the text, without recursion, before anything recurses over the parsed value.
  const { text, problem } = jsonTextOf(value);
  if (problem !== undefined) return { ok: false, reason: problem, findings: [{ field: 'value', message: problem }] };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const message = `is not JSON (${(error as Error).message})`;
    return { ok: false, reason: `not JSON: ${(error as Error).message}`, findings: [{ field: 'value', message }] };
  }
  return validate(json);
}
