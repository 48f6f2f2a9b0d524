import type { z } from 'zod';
import { BillingException, type Finding } from '../common/errors/billing.exception';
import { findingsOf } from '../common/http/zod-validation.pipe';
import {
  environmentRequestSchema,
  gpuTypeSchema,
  isGpuSizeClass,
  isRecord,
  isSizeClass,
  variantSchema,
  type Environment,
  type EnvironmentRequest,
} from './environment';
import { gpuRates, offersVariant, RateCard, type RateCardVersion } from './rate-card';

export interface Price {
  ratePerHourMicros: bigint;
  rateCardVersion: string;
}

/**
 * What a well-formed request asks for that this rate card cannot price: an unknown variant, GPUs on
 * a variant without any, a GPU type the variant does not offer. Reads the raw input leniently (each
 * field only if it is well formed on its own), so that these findings can be listed next to the
 * shape findings of a request that is also malformed. `input` holds `variant` and `environment` at
 * its top level, possibly among other fields; `prefix` is where that object sits.
 */
export function capabilityFindings(card: RateCardVersion, input: unknown, prefix = ''): Finding[] {
  const at = (path: string): string => (prefix ? `${prefix}.${path}` : path);
  if (!isRecord(input)) return [];
  const variant = variantSchema.safeParse(input.variant);
  if (!variant.success) return [];
  if (!offersVariant(card, variant.data)) {
    return [
      {
        field: at('variant'),
        message: `${variant.data} is not a variant the rate card prices (${card.variants.join(', ')})`,
      },
    ];
  }
  const environment = input.environment;
  if (!isRecord(environment)) return [];
  const sizeClass = isSizeClass(environment.sizeClass) ? environment.sizeClass : undefined;
  const accelerator = environment.accelerator ?? undefined;
  const gpus = gpuRates(card, variant.data);
  const wantsGpus = (sizeClass !== undefined && isGpuSizeClass(sizeClass)) || accelerator !== undefined;
  if (wantsGpus && gpus.size === 0) {
    return [
      {
        field: at(accelerator !== undefined ? 'environment.accelerator' : 'environment.sizeClass'),
        message: `the ${variant.data} variant has no GPUs`,
      },
    ];
  }
  if (!isRecord(accelerator)) return [];
  const type = gpuTypeSchema.safeParse(accelerator.type);
  if (type.success && !gpus.has(type.data)) {
    return [
      {
        field: at('environment.accelerator.type'),
        message: `${type.data} is not offered on the ${variant.data} variant (offered: ${[...gpus.keys()].join(', ')})`,
      },
    ];
  }
  return [];
}

/**
 * Parses a request that carries `{variant, environment}` (alone or inside a larger schema) and
 * refuses it with every finding: DL_BILLING_REQUEST_INVALID when anything is malformed (listing the
 * capability findings too), otherwise DL_BILLING_CAPABILITY_UNSUPPORTED when it cannot be priced.
 */
export function parsePricedRequest<T extends z.ZodType>(
  schema: T,
  input: unknown,
  card: RateCardVersion,
  prefix = '',
): z.output<T> {
  const parsed = schema.safeParse(input);
  const unsupported = capabilityFindings(card, input, prefix);
  if (!parsed.success) {
    throw BillingException.invalid([...findingsOf(parsed.error, prefix), ...unsupported]);
  }
  if (unsupported.length > 0) throw unsupportedException(unsupported);
  return parsed.data;
}

/** `{variant, environment}` on its own, e.g. the data of a `runtime.started` that was never reserved. */
export function validateEnvironmentRequest(card: RateCardVersion, input: unknown, prefix = ''): EnvironmentRequest {
  return parsePricedRequest(environmentRequestSchema, input, card, prefix);
}

export function unsupportedException(findings: Finding[]): BillingException {
  return new BillingException(
    'DL_BILLING_CAPABILITY_UNSUPPORTED',
    'The requested environment cannot be priced on this variant',
    findings,
  );
}

/**
 * Rate per hour of an environment on a variant: the size class's rate, plus for a GPU class the
 * accelerator's rate × count. `card` is a version, or the rate card (its current version).
 * Refuses what the request validation refuses, with the same codes.
 */
export function priceEnvironment(card: RateCard | RateCardVersion, variant: string, environment: Environment): Price {
  const version = card instanceof RateCard ? card.current() : card;
  const request = validateEnvironmentRequest(version, { variant, environment });
  const env = request.environment;
  let rate = version.sizeClasses[env.sizeClass];
  if (env.accelerator) {
    // Validation guarantees the variant offers this type.
    const perGpu = gpuRates(version, request.variant).get(env.accelerator.type) as bigint;
    rate += perGpu * BigInt(env.accelerator.count);
  }
  return { ratePerHourMicros: rate, rateCardVersion: version.version };
}
