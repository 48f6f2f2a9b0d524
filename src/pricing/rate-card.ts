import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from 'src/common/config/config';
import { parseCredits } from 'src/common/money';
import { ancillaryPricesSchema, type AncillaryPrices } from './ancillary-prices';
import {
  CUDA_RULE,
  CUDA_VERSION,
  HINT_KEYS,
  SIZE_CLASSES,
  gpuTypeSchema,
  variantSchema,
  type HintKey,
  type SizeClass,
} from './environment';

/** A rate in the contract's JSON form: credits per hour with exactly 6 decimals ("2.000000"). */
const rateSchema = z
  .string()
  .regex(/^\d{1,12}\.\d{6}$/, 'must be credits per hour as a decimal string with 6 decimals, e.g. "2.000000"')
  .transform((text) => parseCredits(text) as bigint);

/** What a size class provides: vCPUs, memory and disk (GiB); the bounds of an environment's `resources.hints`. */
const sizeClassResourcesSchema = z.strictObject(
  Object.fromEntries(HINT_KEYS.map((k) => [k, z.number().positive('must be a positive number')])) as Record<HintKey, z.ZodNumber>,
);
export type SizeClassResources = Readonly<Record<HintKey, number>>;

const versionSchema = z
  .strictObject({
    version: z.string().min(1).max(64),
    effectiveFrom: z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' }),
    sizeClasses: z.strictObject(Object.fromEntries(SIZE_CLASSES.map((c) => [c, rateSchema])) as Record<SizeClass, typeof rateSchema>),
    resources: z.strictObject(
      Object.fromEntries(SIZE_CLASSES.map((c) => [c, sizeClassResourcesSchema])) as Record<SizeClass, typeof sizeClassResourcesSchema>,
    ),
    variants: z.array(variantSchema).min(1),
    accelerators: z.record(variantSchema, z.record(gpuTypeSchema, rateSchema)).default({}),
    ancillary: ancillaryPricesSchema,
  })
  .superRefine((v, ctx) => {
    const seen = new Set<string>();
    v.variants.forEach((variant, i) => {
      if (seen.has(variant)) ctx.addIssue({ code: 'custom', path: ['variants', i], message: `duplicate variant ${variant}` });
      seen.add(variant);
    });
    for (const variant of Object.keys(v.accelerators)) {
      if (!seen.has(variant)) {
        ctx.addIssue({ code: 'custom', path: ['accelerators', variant], message: 'is not listed in variants' });
      }
    }
  });

/**
 * The approved base images and the CUDA version each carries (null: none). A key is an image
 * reference with its tag (`datalayer/python-cuda:2026.09`) or a repository alone
 * (`datalayer/python-cpu`: every tag of it).
 */
const basesSchema = z.record(
  z.string().regex(/^[^\s@]{1,255}$/, 'must be an image repository, optionally with a :tag'),
  z.strictObject({ cuda: z.string().regex(CUDA_VERSION, CUDA_RULE).nullable() }),
);

export const rateCardFileSchema = z
  .strictObject({ bases: basesSchema, versions: z.array(versionSchema).min(1, 'must list at least one version') })
  .superRefine((file, ctx) => {
    const names = new Set<string>();
    const instants = new Set<number>();
    file.versions.forEach((v, i) => {
      if (names.has(v.version)) ctx.addIssue({ code: 'custom', path: ['versions', i, 'version'], message: 'is not unique' });
      const t = Date.parse(v.effectiveFrom);
      if (instants.has(t)) {
        ctx.addIssue({ code: 'custom', path: ['versions', i, 'effectiveFrom'], message: 'two versions take effect at the same instant' });
      }
      names.add(v.version);
      instants.add(t);
    });
  });

/** One version of the rate card; amounts in micro-credits per hour. */
export interface RateCardVersion {
  readonly version: string;
  readonly effectiveFrom: Date;
  readonly sizeClasses: Readonly<Record<SizeClass, bigint>>;
  /** What each size class provides: the bounds of `resources.hints`. */
  readonly resources: Readonly<Record<SizeClass, SizeClassResources>>;
  /** Approved base image (reference or repository) → the CUDA version it carries (null: none); the file's, shared by every version. */
  readonly bases: ReadonlyMap<string, string | null>;
  /** The variants this version prices, in file order. */
  readonly variants: readonly string[];
  /** Per variant, GPU type → rate per GPU. A priced variant absent here has no GPUs. Maps, so that
   * a request naming e.g. "constructor" never reaches an object prototype. */
  readonly accelerators: ReadonlyMap<string, ReadonlyMap<string, bigint>>;
  /** Snapshots, volumes, egress and paused memory: a price per unit in µcr, or null (unpriced). */
  readonly ancillary: AncillaryPrices;
}

export function offersVariant(card: RateCardVersion, variant: string): boolean {
  return card.variants.includes(variant);
}

/** GPU types a variant offers (empty when it has none). */
export function gpuRates(card: RateCardVersion, variant: string): ReadonlyMap<string, bigint> {
  return card.accelerators.get(variant) ?? new Map();
}

/**
 * Whether a base image is approved and which CUDA version it carries: the entry of its exact
 * reference, else of its repository (the reference without `:tag` or `@digest`); undefined when
 * it is not approved.
 */
export function baseCuda(card: RateCardVersion, ref: string): { cuda: string | null } | undefined {
  const exact = card.bases.get(ref);
  if (exact !== undefined) return { cuda: exact };
  const untagged = ref.replace(/@.*$/, '').replace(/:[^/:]*$/, '');
  const repository = card.bases.get(untagged);
  return repository !== undefined ? { cuda: repository } : undefined;
}

/** The CUDA versions the approved bases carry, sorted. */
export function approvedCudaVersions(card: RateCardVersion): string[] {
  return [...new Set([...card.bases.values()].filter((v): v is string => v !== null))].sort();
}

/** Validates a parsed rate-card document; `source` (a file name) prefixes every problem. */
export function parseRateCard(json: unknown, source = 'rate card'): RateCardVersion[] {
  const parsed = rateCardFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${source}: ${i.path.map(String).join('.') || '(root)'}: ${i.message}`));
  }
  const bases: ReadonlyMap<string, string | null> = new Map(Object.entries(parsed.data.bases).map(([ref, b]) => [ref, b.cuda]));
  return parsed.data.versions
    .map((v): RateCardVersion => ({
      version: v.version,
      effectiveFrom: new Date(v.effectiveFrom),
      sizeClasses: Object.freeze({ ...v.sizeClasses }),
      resources: Object.freeze({ ...v.resources }),
      bases,
      variants: Object.freeze([...v.variants]),
      accelerators: new Map(Object.entries(v.accelerators).map(([variant, rates]) => [variant, new Map(Object.entries(rates))])),
      ancillary: v.ancillary,
    }))
    .sort((a, b) => a.effectiveFrom.getTime() - b.effectiveFrom.getTime());
}

/** Reads and validates a rate-card file (a relative path is from the working directory; the configuration gives a full one). */
export function loadRateCardFile(path: string): RateCardVersion[] {
  return parseRateCard(readJsonFile(path, 'RATE_CARD_FILE'), path);
}

export function readJsonFile(path: string, variable: string): unknown {
  let text: string;
  try {
    text = readFileSync(resolve(path), 'utf8');
  } catch (error) {
    throw new ConfigError([`${variable}: cannot read ${path} (${(error as Error).message})`]);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ConfigError([`${path}: not valid JSON (${(error as Error).message})`]);
  }
}

/**
 * Every version of the rate card. New reservations are priced with the version in effect now; a
 * reservation records the version's name and is settled with that version, found by name.
 */
export class RateCard {
  private readonly byName: ReadonlyMap<string, RateCardVersion>;

  constructor(
    /** Sorted by effectiveFrom, oldest first. */
    readonly versions: readonly RateCardVersion[],
    private readonly now: () => Date = () => new Date(),
  ) {
    if (versions.length === 0) throw new RangeError('a rate card needs at least one version');
    this.versions = [...versions].sort((a, b) => a.effectiveFrom.getTime() - b.effectiveFrom.getTime());
    this.byName = new Map(this.versions.map((v) => [v.version, v]));
  }

  static fromFile(path: string, now?: () => Date): RateCard {
    return new RateCard(loadRateCardFile(path), now);
  }

  /** The version in effect now. */
  current(): RateCardVersion {
    return this.at(this.now());
  }

  /**
   * The latest version whose effectiveFrom ≤ `instant`. Before the first version takes effect the
   * first one applies: a clock set in the past must not leave the service with nothing to price by.
   */
  at(instant: Date): RateCardVersion {
    const t = instant.getTime();
    let found = this.versions[0] as RateCardVersion;
    for (const v of this.versions) {
      if (v.effectiveFrom.getTime() <= t) found = v;
      else break;
    }
    return found;
  }

  /** A version by name, or undefined. */
  version(name: string): RateCardVersion | undefined {
    return this.byName.get(name);
  }

  /** A version by name; a missing one is a deployment error (a version was removed from the file). */
  requireVersion(name: string): RateCardVersion {
    const v = this.byName.get(name);
    if (!v) throw new Error(`rate card version ${name} is not in the rate card file; versions are never removed`);
    return v;
  }
}
