import type { z } from 'zod';
import { BillingException } from 'src/common/errors/billing.exception';
import { findingsOf } from 'src/common/http/zod-validation.pipe';
import { environmentRequestSchema, isRecord, type Environment, type EnvironmentRequest } from './environment';
import { environmentChecks, type EnvironmentFinding, type SpecCode } from './environment-checks';
import { gpuRates, RateCard, type RateCardVersion } from './rate-card';
import { withoutDigest } from './spec-digest';

export interface Price {
  ratePerHourMicros: bigint;
  rateCardVersion: string;
}

/**
 * Parses a request that carries `{variant, environment}` (alone or inside a larger schema) and
 * refuses it with every finding: DL_BILLING_REQUEST_INVALID when anything is malformed or breaks a
 * rule of the Environment specification (listing the capability findings too), otherwise
 * DL_BILLING_CAPABILITY_UNSUPPORTED when it cannot be priced. Findings about the environment carry
 * the specification's code (`specCode`), and so does the error when it has such findings.
 */
export function parsePricedRequest<T extends z.ZodType>(schema: T, input: unknown, card: RateCardVersion, prefix = ''): z.output<T> {
  const parsed = schema.safeParse(input);
  const { invalid, unsupported } = environmentChecks(card, input, prefix);
  // A missing environment is a malformed request, not an environment that breaks the specification.
  const given = isRecord(input) && input.environment !== undefined;
  const shape = parsed.success ? [] : findingsOf(parsed.error, prefix);
  const malformed = [...(given ? specFindings(shape, prefix) : shape), ...invalid];
  if (malformed.length > 0) throw invalidException([...malformed, ...unsupported]);
  if (unsupported.length > 0) throw unsupportedException(unsupported);
  return parsed.data as z.output<T>;
}

/** Shape findings inside the environment break the specification: DL_ENV_SPEC_INVALID. */
function specFindings(findings: EnvironmentFinding[], prefix: string): EnvironmentFinding[] {
  const environment = prefix ? `${prefix}.environment` : 'environment';
  return findings.map((f) =>
    f.field === environment || f.field.startsWith(`${environment}.`) ? { ...f, specCode: 'DL_ENV_SPEC_INVALID' } : f,
  );
}

function specCodeOf(findings: EnvironmentFinding[], wanted: SpecCode): { specCode?: SpecCode } {
  return findings.some((f) => f.specCode === wanted) ? { specCode: wanted } : {};
}

function invalidException(findings: EnvironmentFinding[]): BillingException {
  return new BillingException(
    'DL_BILLING_REQUEST_INVALID',
    'The request is invalid',
    findings,
    specCodeOf(findings, 'DL_ENV_SPEC_INVALID'),
  );
}

/** `{variant, environment}` on its own, e.g. the data of a `runtime.started` that was never reserved. */
export function validateEnvironmentRequest(card: RateCardVersion, input: unknown, prefix = ''): EnvironmentRequest {
  return parsePricedRequest(environmentRequestSchema, input, card, prefix);
}

export function unsupportedException(findings: EnvironmentFinding[]): BillingException {
  return new BillingException(
    'DL_BILLING_CAPABILITY_UNSUPPORTED',
    'The requested environment cannot be priced on this variant',
    findings,
    specCodeOf(findings, 'DL_ENV_CAPABILITY_UNSUPPORTED'),
  );
}

/**
 * Rate per hour of an environment on a variant: the size class's rate, plus for a GPU class the
 * accelerator's rate × count. `card` is a version, or the rate card (its current version).
 * Refuses what the request validation refuses, with the same codes.
 */
export function priceEnvironment(card: RateCard | RateCardVersion, variant: string, environment: Environment): Price {
  const version = card instanceof RateCard ? card.current() : card;
  // A document's digest travels beside its fields; the fields alone are what is priced.
  const request = validateEnvironmentRequest(version, { variant, environment: withoutDigest(environment) });
  const env = request.environment;
  let rate = version.sizeClasses[env.sizeClass];
  if (env.accelerator) {
    // Validation guarantees the variant offers this type.
    const perGpu = gpuRates(version, request.variant).get(env.accelerator.type) as bigint;
    rate += perGpu * BigInt(env.accelerator.count);
  }
  return { ratePerHourMicros: rate, rateCardVersion: version.version };
}
