import { z } from 'zod';
import { ACCOUNT_ID_PATTERN } from 'src/common/auth/scopes';
import type { Finding } from 'src/common/errors/billing.exception';
import { jsonTextOf } from 'src/common/json-limits';
import { messageValidator } from 'src/common/http/zod-validation.pipe';

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

const EARLIEST = Date.parse('2000-01-01T00:00:00Z');
/** Events stamped further in the future than this are refused: a clock that far off is a bug. */
export const FUTURE_TOLERANCE_MS = 24 * 3600_000;

const id = z.string().regex(ACCOUNT_ID_PATTERN, 'must be 1-128 characters of letters, digits and _.:-');

export function lifecycleEventSchema(now: () => Date) {
  return z
    .strictObject({
      id: z.string().min(1).max(200),
      type: z.enum(LIFECYCLE_TYPES),
      occurredAt: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).refine((v) => {
        const t = Date.parse(v);
        return t >= EARLIEST && t <= now().getTime() + FUTURE_TOLERANCE_MS;
      }, 'must be after 2000-01-01 and not more than 24 hours in the future'),
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
  const bySchema = messageValidator(lifecycleEventSchema(now), (e) => ({ ...e, occurredAt: new Date(e.occurredAt) }));
  return (value, prefix) => {
    const event = plainEvent(value, now);
    return event ? { ok: true, event } : bySchema(value, prefix);
  };
}

const TYPES = new Set<string>(LIFECYCLE_TYPES);
const SHAPE_KEYS = new Set(['id', 'type', 'occurredAt', 'accountId', 'runtimeId', 'seq', 'data']);
/**
 * The common event, checked by hand: a third to a half of the schema's cost, which was the largest single cost
 * of a heartbeat in this process. It accepts only what the schema accepts (a subset: a plain
 * `occurredAt`, a valid calendar date and time) and gives the same event; anything else —
 * every refusal, every unusual form — is left to the schema, which names the findings. A property
 * test holds the two equal (lifecycle-event.spec.ts).
 */
function plainEvent(value: unknown, now: () => Date): LifecycleEvent | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const e = value as Record<string, unknown>;
  for (const key in e) if (!SHAPE_KEYS.has(key)) return undefined;
  const { id, type, occurredAt, accountId, runtimeId, seq, data } = e;
  if (typeof id !== 'string' || id.length === 0 || id.length > 200) return undefined;
  if (typeof type !== 'string' || !TYPES.has(type)) return undefined;
  if (typeof accountId !== 'string' || !ACCOUNT_ID_PATTERN.test(accountId)) return undefined;
  if (typeof runtimeId !== 'string' || !ACCOUNT_ID_PATTERN.test(runtimeId)) return undefined;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) return undefined;
  if (
    data !== undefined &&
    (typeof data !== 'object' || data === null || Array.isArray(data) || Object.getPrototypeOf(data) !== Object.prototype)
  ) {
    return undefined;
  }
  const fields = (data ?? {}) as Record<string, unknown>;
  if (type === 'runtime.terminated' || type === 'runtime.launch_failed') {
    const reason = fields.reason;
    if (typeof reason !== 'string' || reason.length === 0 || reason.length > MAX_REASON_LENGTH) return undefined;
  }
  if (typeof occurredAt !== 'string') return undefined;
  const at = plainInstant(occurredAt);
  if (at === undefined || at < EARLIEST || at > now().getTime() + FUTURE_TOLERANCE_MS) return undefined;
  return { id, type: type as LifecycleType, occurredAt: new Date(at), accountId, runtimeId, seq, data: { ...fields } };
}

/** The instant of a plain ISO 8601 date-time, or undefined when it is not one (or not a real date and time). */
function plainInstant(t: string): number | undefined {
  // yyyy-mm-ddThh:mm:ss, then .f (1-9 digits) or not, then Z or ±hh:mm
  const n = t.length;
  if (n < 20 || t.charCodeAt(4) !== DASH || t.charCodeAt(7) !== DASH || t.charCodeAt(10) !== LETTER_T) return undefined;
  if (t.charCodeAt(13) !== COLON || t.charCodeAt(16) !== COLON) return undefined;
  const year = digits(t, 0, 4);
  const month = digits(t, 5, 2);
  const day = digits(t, 8, 2);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  const hour = digits(t, 11, 2);
  const minute = digits(t, 14, 2);
  const second = digits(t, 17, 2);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined;
  let i = 19;
  if (t.charCodeAt(i) === DOT) {
    const from = ++i;
    while (i < n && digits(t, i, 1) >= 0) i++;
    if (i === from || i - from > 9) return undefined;
  }
  const zone = t.charCodeAt(i);
  if (zone === LETTER_Z) {
    if (i !== n - 1) return undefined;
  } else if (zone === PLUS || zone === DASH) {
    if (i !== n - 6 || t.charCodeAt(i + 3) !== COLON) return undefined;
    const offsetHours = digits(t, i + 1, 2);
    const offsetMinutes = digits(t, i + 4, 2);
    if (offsetHours < 0 || offsetHours > 23 || offsetMinutes < 0 || offsetMinutes > 59) return undefined;
  } else return undefined;
  const at = Date.parse(t);
  return Number.isNaN(at) ? undefined : at;
}

const [DASH, COLON, DOT, PLUS, LETTER_T, LETTER_Z, ZERO] = [...'-:.+TZ0'].map((c) => c.charCodeAt(0)) as [
  number,
  number,
  number,
  number,
  number,
  number,
  number,
];
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The number written by `count` decimal digits at `from`, or -1 when they are not all digits. */
function digits(t: string, from: number, count: number): number {
  let value = 0;
  for (let i = from; i < from + count; i++) {
    const d = t.charCodeAt(i) - ZERO;
    if (!(d >= 0 && d <= 9)) return -1;
    value = value * 10 + d;
  }
  return value;
}

function daysIn(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS[month - 1]!;
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
