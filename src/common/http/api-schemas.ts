import { z } from 'zod';
import { ERROR_STATUS, type ErrorCode } from '../errors/error-codes';

/**
 * Building blocks of the response schemas in each module's dto/: the JSON forms the contract fixes
 * (credits as 6-decimal strings, UTC ISO 8601 times) and the error body. They are zod schemas, so
 * the OpenAPI document, the typed client and the tests' response checks all come from them.
 */
export const credits = z
  .string()
  .regex(/^-?\d+\.\d{6}$/)
  .meta({ description: 'An amount of credits: a decimal string with 6 decimals', examples: ['12.500000'] });

/** An instant as the service writes it: `Date.toISOString()`, always UTC. */
export const instant = z.iso.datetime();

const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(10_000, 0, 1);

/**
 * An instant a caller sends: ISO 8601 with `Z` or an offset, from 1970 through 9999. PostgreSQL has
 * no year 0, so `0000-01-01T00:00:00Z` (valid ISO 8601) would fail the query it reaches.
 */
export const inputInstant = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).refine((v) => {
  const t = Date.parse(v);
  // Text that is no date-time at all has its finding from the format check already.
  return Number.isNaN(t) || (t >= EARLIEST && t < LATEST);
}, 'must be from 1970-01-01 through 9999-12-31');

/**
 * A page's `cursor` query parameter: the `nextCursor` the endpoint returned; absent, or empty
 * (`?cursor=`, as a client writes the first page's URL: parseQueryOrThrow), is the first page.
 */
export const cursorParam = z
  .string()
  .regex(/^\d{1,18}$/, 'must be a cursor returned by this endpoint')
  .optional();

/** The earliest an event (lifecycle, ancillary, membership) may be stamped. */
export const EVENT_EARLIEST = Date.UTC(2000, 0, 1);
/** Events stamped further in the future than this are refused: a clock that far off is a bug. */
export const FUTURE_TOLERANCE_MS = 24 * 3600_000;
/** The finding of an event time outside [EVENT_EARLIEST, now + FUTURE_TOLERANCE_MS]. */
export const EVENT_TIME_RULE = 'must be after 2000-01-01 and not more than 24 hours in the future';

/**
 * An event's `occurredAt`: ISO 8601 with `Z` or an offset, after 2000-01-01 and at most
 * FUTURE_TOLERANCE_MS ahead of `now` (the service's clock, read at each check).
 */
export function eventInstant(now: () => Date) {
  return z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }).refine((v) => {
    const t = Date.parse(v);
    // Text that is no date-time at all has its finding from the format check already.
    return Number.isNaN(t) || (t >= EVENT_EARLIEST && t <= now().getTime() + FUTURE_TOLERANCE_MS);
  }, EVENT_TIME_RULE);
}

export const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

const specCode = z
  .enum(['DL_ENV_SPEC_INVALID', 'DL_ENV_CAPABILITY_UNSUPPORTED'])
  .optional()
  .meta({ description: "The Environment specification's own code, on findings (and errors) about the environment" });

export const findingSchema = z
  .strictObject({ field: z.string(), message: z.string(), specCode })
  .meta({ id: 'Finding', description: 'One problem with the request, named by the field it is in (e.g. `environment.sizeClass`)' });

export const errorBodySchema = z
  .strictObject({
    error: z.strictObject({
      code: z.enum(ERROR_CODES),
      message: z.string(),
      findings: z.array(findingSchema).optional(),
      specCode,
      // Detail fields, each given by the errors named in its description.
      quota: z.enum(['runs', 'agents', 'concurrency']).optional().meta({ description: 'DL_BILLING_QUOTA_EXCEEDED: the quota reached' }),
      limit: z
        .union([z.number().int(), credits])
        .optional()
        .meta({ description: 'DL_BILLING_QUOTA_EXCEEDED: the quota (a count); DL_BILLING_SPEND_LIMIT_REACHED: the limit (credits)' }),
      used: z.number().int().optional().meta({ description: 'DL_BILLING_QUOTA_EXCEEDED: how much of the quota is used' }),
      resetsAt: instant
        .optional()
        .meta({ description: 'DL_BILLING_QUOTA_EXCEEDED, DL_BILLING_SPEND_LIMIT_REACHED: when the quota or the limit resets' }),
      remaining: credits.optional().meta({ description: 'DL_BILLING_SPEND_LIMIT_REACHED: what the limit still allows' }),
      spent: credits.optional().meta({ description: 'DL_BILLING_SPEND_LIMIT_REACHED: settled charges in the period' }),
      held: credits.optional().meta({ description: 'DL_BILLING_SPEND_LIMIT_REACHED: open holds in the period' }),
      scope: z
        .strictObject({ userId: z.string() })
        .nullable()
        .optional()
        .meta({ description: 'DL_BILLING_SPEND_LIMIT_REACHED: the member whose limit it is (null: the account)' }),
      required: credits
        .optional()
        .meta({ description: 'DL_BILLING_INSUFFICIENT_CREDITS, DL_BILLING_SPEND_LIMIT_REACHED: what the request needs' }),
      available: credits.optional().meta({ description: 'DL_BILLING_INSUFFICIENT_CREDITS: the available balance' }),
      reservationId: z
        .string()
        .optional()
        .meta({ description: 'DL_BILLING_IDEMPOTENCY_CONFLICT: the reservation the runtime id already has' }),
      retryAfterSeconds: z.number().int().optional().meta({ description: 'DL_BILLING_RATE_LIMITED: when to try again' }),
    }),
  })
  .meta({
    id: 'ErrorBody',
    description: 'Every error: a DL_BILLING_* code, a message, every finding, and detail fields where the code has some',
  });

/** `{items, nextCursor}`: one page, newest first; `nextCursor` null on the last page. */
export function page<T extends z.ZodType>(item: T) {
  return z.strictObject({ items: z.array(item), nextCursor: z.string().nullable() });
}
