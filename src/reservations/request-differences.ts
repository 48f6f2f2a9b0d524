import { canonicalJson, fingerprint } from 'src/common/canonical-json';
import type { Finding } from 'src/common/errors/billing.exception';
import type { RuntimeRow } from 'src/metering/runtime-row';
import type { Environment } from 'src/pricing/environment';
import type { ReservationRequest } from './dto/reservation.dto';

/**
 * What a 409 DL_BILLING_IDEMPOTENCY_CONFLICT names: each field in which a request differs from the
 * one its runtime was reserved with (or its Idempotency-Key's extension was made with), by the path
 * the request names it, with both values. Pure functions; the fingerprint's semantics are untouched
 * (a request is compared as it was fingerprinted: parsed, defaults filled in, keys in any order).
 */

/**
 * The request a reservation was made with, rebuilt from its runtime row: every fingerprinted field
 * is a column set once at reservation (user, agent, variant, environment, spec digest), but for the
 * minutes, which extensions grow (`extendedMinutes`: theirs, summed). A document's fingerprint also
 * has its spec digest (its other spec keys are only in that digest), a short form's does not: both
 * are tried. Only a request that hashes to the stored fingerprint is returned, so the differences
 * named are exact; null for a row that does not reproduce it (e.g. a document reserved before spec
 * digests were kept).
 */
export function reservedRequest(
  row: Pick<
    RuntimeRow,
    | 'runtime_id'
    | 'account_id'
    | 'user_id'
    | 'agent_id'
    | 'variant'
    | 'environment'
    | 'spec_digest'
    | 'reserved_minutes'
    | 'request_fingerprint'
  >,
  extendedMinutes: number,
): ReservationRequest | null {
  if (!row.request_fingerprint || row.variant === null || row.environment === null) return null;
  const environment = row.environment as unknown as Environment;
  const forms = [environment, ...(row.spec_digest ? [{ ...environment, specDigest: row.spec_digest }] : [])];
  for (const form of forms) {
    const request: ReservationRequest = {
      accountId: row.account_id,
      runtimeId: row.runtime_id,
      ...(row.user_id !== null ? { userId: row.user_id } : {}),
      ...(row.agent_id !== null ? { agentId: row.agent_id } : {}),
      variant: row.variant,
      environment: form,
      minutes: row.reserved_minutes - extendedMinutes,
    };
    if (fingerprint(request) === row.request_fingerprint) return request;
  }
  return null;
}

/** The finding when the reservation's request cannot be rebuilt: the body differs, the fields cannot be told. */
export const BODY_DIFFERS: Finding = {
  field: 'body',
  message: 'differs from the request the reservation was made with (which fields cannot be told: the reservation predates keeping them)',
};

/** The fields of `sent` that differ from `reserved`, each as the sent request names it ([BODY_DIFFERS] when none can be named). */
export function requestDifferences(reserved: ReservationRequest | null, sent: ReservationRequest): Finding[] {
  if (!reserved) return [BODY_DIFFERS];
  const findings: Finding[] = [];
  const a = reserved as unknown as Record<string, unknown>;
  const b = sent as unknown as Record<string, unknown>;
  for (const key of ordered(TOP_ORDER, a, b)) {
    if (key === 'environment') findings.push(...environmentDifferences(reserved.environment, sent.environment));
    else compare(key, a[key], b[key], findings);
  }
  return findings.length > 0 ? findings : [BODY_DIFFERS];
}

/** An extension replayed under its Idempotency-Key with other minutes (the key is its runtime's: only the minutes can differ). */
export function extensionDifferences(prior: { fingerprint: string; minutes: number }, runtimeId: string, minutes: number): Finding[] {
  if (fingerprint({ runtimeId, minutes: prior.minutes }) !== prior.fingerprint) return [BODY_DIFFERS];
  return [{ field: 'minutes', message: `extended by ${prior.minutes} under this Idempotency-Key, sent ${minutes}` }];
}

const TOP_ORDER = ['accountId', 'runtimeId', 'userId', 'agentId', 'variant', 'environment', 'minutes'];
const ENVIRONMENT_ORDER = ['name', 'sizeClass', 'accelerator', 'hints', 'base', 'compatibility'];
/** Where a document holds each field of the environment as billing keeps it (environment.ts `fromDocument`). */
const IN_DOCUMENT: Record<string, string> = {
  name: 'metadata.name',
  sizeClass: 'spec.resources.sizeClass',
  accelerator: 'spec.resources.accelerator',
  hints: 'spec.resources.hints',
  base: 'spec.base',
  compatibility: 'spec.compatibility',
};

/**
 * The environment's differences, by the paths of the form sent (short form, or document: also as
 * YAML text). A document's other spec keys are only in its digest: when the digests differ and no
 * spec field does, the finding is on `environment.spec`. The same environment in the other form is
 * a different request too (a document's fingerprint has its digest), said on `environment`.
 */
function environmentDifferences(reserved: Environment, sent: Environment): Finding[] {
  const findings: Finding[] = [];
  const document = sent.specDigest !== undefined;
  if ((reserved.specDigest !== undefined) !== document) {
    findings.push({
      field: 'environment',
      message: document
        ? 'reserved with the short form {name, sizeClass, …}, sent an Environment document'
        : 'reserved with an Environment document, sent the short form {name, sizeClass, …}',
    });
  }
  const a = reserved as unknown as Record<string, unknown>;
  const b = sent as unknown as Record<string, unknown>;
  for (const key of ordered(ENVIRONMENT_ORDER, a, b)) {
    if (key === 'specDigest') continue;
    compare(`environment.${document ? (IN_DOCUMENT[key] ?? `spec.${key}`) : key}`, a[key], b[key], findings);
  }
  const specFields = findings.some((f) => f.field.startsWith('environment.spec.'));
  if (document && reserved.specDigest !== undefined && reserved.specDigest !== sent.specDigest && !specFields) {
    findings.push({ field: 'environment.spec', message: `reserved with a spec of digest ${reserved.specDigest}, sent ${sent.specDigest}` });
  }
  return findings;
}

/** Differences at `path`: into both sides where both are objects, otherwise the value as a whole. */
function compare(path: string, a: unknown, b: unknown, findings: Finding[]): void {
  if (a === undefined && b === undefined) return;
  if (a !== undefined && b !== undefined && canonicalJson(a) === canonicalJson(b)) return;
  if (isObject(a) && isObject(b)) {
    for (const key of ordered([], a, b)) compare(`${path}.${key}`, a[key], b[key], findings);
    return;
  }
  const was = a === undefined ? 'absent when reserved' : `reserved with ${canonicalJson(a)}`;
  const now = b === undefined ? 'absent in this request' : `sent ${canonicalJson(b)}`;
  findings.push({ field: path, message: `${was}, ${now}` });
}

/** The keys of either object: those of `first` in its order, then the others sorted. */
function ordered(first: readonly string[], a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const rest = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !first.includes(k)).sort();
  return [...first.filter((k) => k in a || k in b), ...rest];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
