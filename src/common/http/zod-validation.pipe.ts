import type { PipeTransform } from '@nestjs/common';
import type { z } from 'zod';
import { BillingException, type Finding } from '../errors/billing.exception';

/**
 * Turns every zod issue into a finding named by its field path (e.g. `environment.sizeClass`); a key
 * the schema does not know is a finding of its own, named by its path (`environment.image`).
 */
export function findingsOf(error: z.ZodError, prefix = ''): Finding[] {
  return perUnknownKey(error.issues).map((issue) => findingOf(issue, prefix));
}

/** The message of a key the schema does not know. */
export const UNKNOWN_FIELD = 'is not a known field';

/** The issues with each unknown key an issue of its own, at the key's path, saying `unknown`. */
export function perUnknownKey(issues: readonly z.core.$ZodIssue[], unknown = UNKNOWN_FIELD): { path: PropertyKey[]; message: string }[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys' ? issue.keys.map((key) => ({ path: [...issue.path, key], message: unknown })) : [issue],
  );
}

function findingOf(issue: { path: readonly PropertyKey[]; message: string }, prefix: string): Finding {
  return { field: fieldName(prefix, issue.path), message: issue.message };
}

function fieldName(prefix: string, path: readonly PropertyKey[]): string {
  return [prefix, path.map(String).join('.')].filter((p) => p.length > 0).join('.') || 'body';
}

/** What a message validator gives: the value it stands for, or why not, with every finding named by its field. */
export type Validated<T> = { ok: true; event: T } | { ok: false; reason: string; findings: Finding[] };

/**
 * A validator of parsed messages (events from Kafka or `POST /v1/events`): the schema built once,
 * findings named by field (with `prefix`, e.g. `events[3]`), and `toEvent` making the result.
 */
export function messageValidator<S extends z.ZodType, T>(
  schema: S,
  toEvent: (parsed: z.output<S>) => T,
): (value: unknown, prefix?: string) => Validated<T> {
  return (value, prefix = '') => {
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      const findings = findingsOf(parsed.error, prefix);
      return { ok: false, reason: `invalid event: ${findings.map((f) => `${f.field}: ${f.message}`).join('; ')}`, findings };
    }
    return { ok: true, event: toEvent(parsed.data) };
  };
}

export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, prefix = ''): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw BillingException.invalid(findingsOf(result.error, prefix));
  return result.data;
}

/** Validates a body, query or param with a zod schema and lists every finding. */
export class ZodPipe<T extends z.ZodType> implements PipeTransform<unknown, z.output<T>> {
  constructor(
    private readonly schema: T,
    private readonly prefix = '',
  ) {}

  transform(value: unknown): z.output<T> {
    return parseOrThrow(this.schema, value, this.prefix);
  }
}

/**
 * A query string: as parseOrThrow, but a parameter the endpoint does not take is named by itself
 * (`format: is not a parameter of this endpoint`), not as `body`; an optional parameter sent empty
 * counts as absent.
 */
export function parseQueryOrThrow<T extends z.ZodType>(schema: T, query: unknown): z.output<T> {
  const result = schema.safeParse(withoutBlankOptionals(schema, query));
  if (result.success) return result.data;
  throw BillingException.invalid(
    perUnknownKey(result.error.issues, 'is not a parameter of this endpoint').map((issue) => findingOf(issue, '')),
  );
}

/** Validates a query string as parseQueryOrThrow does: each finding named by its parameter. */
export class ZodQueryPipe<T extends z.ZodType> implements PipeTransform<unknown, z.output<T>> {
  constructor(private readonly schema: T) {}

  transform(value: unknown): z.output<T> {
    return parseQueryOrThrow(this.schema, value);
  }
}

/**
 * The query without the empty values of its optional parameters: `?from=&to=&groupBy=day`, as the
 * contract writes its routes, is the default period, as `?cursor=` is the first page. An empty value
 * of a parameter the endpoint does not take, or of one it needs, is left to be refused.
 */
function withoutBlankOptionals(schema: z.ZodType, query: unknown): unknown {
  const shape = (schema as { shape?: Record<string, z.ZodType> }).shape;
  if (!shape || query === null || typeof query !== 'object') return query;
  const entries = Object.entries(query as Record<string, unknown>);
  const blank = (key: string, value: unknown) => value === '' && Object.hasOwn(shape, key) && shape[key]!.safeParse(undefined).success;
  if (!entries.some(([key, value]) => blank(key, value))) return query;
  return Object.fromEntries(entries.filter(([key, value]) => !blank(key, value)));
}
