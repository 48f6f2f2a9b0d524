import type { Finding } from 'src/common/errors/billing.exception';
import {
  CUDA_VERSION,
  HINT_KEYS,
  environmentValue,
  gpuTypeSchema,
  isEnvironmentDocument,
  isGpuSizeClass,
  isNoAccelerator,
  isRecord,
  isSizeClass,
  variantSchema,
  type SizeClass,
} from './environment';
import { approvedCudaVersions, baseCuda, gpuRates, offersVariant, type RateCardVersion } from './rate-card';

/** The Environment specification's own codes, carried by each finding about the environment. */
export type SpecCode = 'DL_ENV_SPEC_INVALID' | 'DL_ENV_CAPABILITY_UNSUPPORTED';
export interface EnvironmentFinding extends Finding {
  specCode?: SpecCode;
}

/**
 * The rules that need the rate card: `invalid` breaks a rule of the specification (a hint beyond
 * its size class, a GPU class on a base without CUDA, a CUDA version no approved base carries);
 * `unsupported` is well formed but not offered here (a variant the rate card does not price, one the
 * environment's compatibility excludes, GPUs on a variant without, a GPU type it does not offer, a
 * base that is not approved).
 */
export interface EnvironmentChecks {
  invalid: EnvironmentFinding[];
  unsupported: EnvironmentFinding[];
}

type Part = 'sizeClass' | 'accelerator' | 'hints' | 'base' | 'compatibility';

/** The parts of an environment in any form, read leniently, and the field path of each as sent. */
interface Parts {
  values: Partial<Record<Part, unknown>>;
  path(part: Part): string;
}

function partsOf(environment: unknown, at: (path: string) => string): Parts | undefined {
  const given = environmentValue(environment);
  if ('problem' in given || !isRecord(given.value)) return undefined;
  const value = given.value;
  if (!isEnvironmentDocument(value)) return { values: value, path: (part) => at(`environment.${part}`) };
  const spec = isRecord(value.spec) ? value.spec : {};
  const resources = isRecord(spec.resources) ? spec.resources : {};
  return {
    values: { ...resources, base: spec.base, compatibility: spec.compatibility },
    path: (part) => at(part === 'base' || part === 'compatibility' ? `environment.spec.${part}` : `environment.spec.resources.${part}`),
  };
}

/**
 * Reads the raw input leniently (each field only if it is well formed on its own), so that these
 * findings can be listed next to the shape findings of a request that is also malformed. `input`
 * holds `variant` and `environment` at its top level, possibly among other fields; `prefix` is
 * where that object sits.
 */
export function environmentChecks(card: RateCardVersion, input: unknown, prefix = ''): EnvironmentChecks {
  const at = (path: string): string => (prefix ? `${prefix}.${path}` : path);
  const checks: EnvironmentChecks = { invalid: [], unsupported: [] };
  if (!isRecord(input)) return checks;
  const parts = partsOf(input.environment, at);
  if (parts) {
    checks.invalid.push(...hintFindings(card, parts));
    baseFindings(card, parts, checks);
  }
  const variant = variantSchema.safeParse(input.variant);
  if (!variant.success) return checks;
  if (!offersVariant(card, variant.data)) {
    checks.unsupported.push({
      field: at('variant'),
      message: `${variant.data} is not a variant the rate card prices (${card.variants.join(', ')})`,
    });
    return checks;
  }
  if (!parts) return checks;
  const compatibility = compatibilityFinding(parts, variant.data, at('variant'));
  if (compatibility) checks.unsupported.push(compatibility);
  const gpu = gpuFinding(card, parts, variant.data);
  if (gpu) checks.unsupported.push(gpu);
  return checks;
}

/** `resources.hints`: each hint at most what the size class provides. */
function hintFindings(card: RateCardVersion, parts: Parts): EnvironmentFinding[] {
  const { sizeClass, hints } = parts.values;
  if (!isSizeClass(sizeClass) || !isRecord(hints)) return [];
  const bounds = card.resources[sizeClass];
  return HINT_KEYS.flatMap((key) => {
    const hint = hints[key];
    if (typeof hint !== 'number' || !(hint > 0) || hint <= bounds[key]) return [];
    return [
      {
        field: `${parts.path('hints')}.${key}`,
        message: `must be at most ${bounds[key]}, within the ${sizeClass} size class (${describeSize(card, sizeClass)})`,
        specCode: 'DL_ENV_SPEC_INVALID' as const,
      },
    ];
  });
}

export function describeSize(card: RateCardVersion, sizeClass: SizeClass): string {
  const r = card.resources[sizeClass];
  return `${r.cpu} vCPU, ${r.memoryGi} GiB memory, ${r.diskGi} GiB disk`;
}

/** A GPU class needs an approved CUDA base, and `accelerator.cuda` is the version that base carries. */
function baseFindings(card: RateCardVersion, parts: Parts, checks: EnvironmentChecks): void {
  const { sizeClass, accelerator, base } = parts.values;
  const gpuClass = isSizeClass(sizeClass) && isGpuSizeClass(sizeClass);
  const ref = isRecord(base) && typeof base.ref === 'string' && /^[^\s]{1,255}$/.test(base.ref) ? base.ref : undefined;
  const cuda =
    isRecord(accelerator) && typeof accelerator.cuda === 'string' && CUDA_VERSION.test(accelerator.cuda) ? accelerator.cuda : undefined;
  const cudaField = `${parts.path('accelerator')}.cuda`;
  const cudaBases = [...card.bases].filter(([, v]) => v !== null).map(([r, v]) => `${r}: ${v}`);
  if (ref !== undefined && gpuClass) {
    const approved = baseCuda(card, ref);
    if (!approved) {
      checks.unsupported.push({
        field: `${parts.path('base')}.ref`,
        message: `${ref} is not an approved CUDA base (approved: ${cudaBases.join(', ') || 'none'})`,
        specCode: 'DL_ENV_CAPABILITY_UNSUPPORTED',
      });
    } else if (approved.cuda === null) {
      checks.invalid.push({
        field: `${parts.path('base')}.ref`,
        message: `${ref} has no CUDA; the ${String(sizeClass)} size class needs a CUDA base (${cudaBases.join(', ') || 'none approved'})`,
        specCode: 'DL_ENV_SPEC_INVALID',
      });
    } else if (cuda !== undefined && cuda !== approved.cuda) {
      checks.invalid.push({
        field: cudaField,
        message: `must be ${approved.cuda}, the CUDA version of the base ${ref}`,
        specCode: 'DL_ENV_SPEC_INVALID',
      });
    }
    return;
  }
  if (cuda !== undefined && ref === undefined && !approvedCudaVersions(card).includes(cuda)) {
    checks.invalid.push({
      field: cudaField,
      message: `must be the CUDA version of an approved CUDA base (${cudaBases.join(', ') || 'none approved'})`,
      specCode: 'DL_ENV_SPEC_INVALID',
    });
  }
}

/** `compatibility.variants`: the launch's variant is one of `required` or `optional`. */
function compatibilityFinding(parts: Parts, variant: string, field: string): EnvironmentFinding | undefined {
  const { compatibility } = parts.values;
  if (!isRecord(compatibility) || !isRecord(compatibility.variants)) return undefined;
  const lists = [compatibility.variants.required, compatibility.variants.optional];
  // A malformed list is a shape finding already; the variant is judged only against well-formed lists.
  if (!lists.every((v) => v === undefined || (Array.isArray(v) && v.every((x) => typeof x === 'string')))) return undefined;
  const [required, optional] = lists.map((v) => (v ?? []) as string[]) as [string[], string[]];
  if (required.includes(variant) || optional.includes(variant)) return undefined;
  return {
    field,
    message: `${variant} is not one of the environment's variants (required: ${required.join(', ') || 'none'}; optional: ${optional.join(', ') || 'none'})`,
    specCode: 'DL_ENV_CAPABILITY_UNSUPPORTED',
  };
}

/** GPUs on a variant without any, or a GPU type the variant does not offer. */
function gpuFinding(card: RateCardVersion, parts: Parts, variant: string): EnvironmentFinding | undefined {
  const { sizeClass, accelerator } = parts.values;
  const hasAccelerator = !isNoAccelerator(accelerator);
  const gpus = gpuRates(card, variant);
  const wantsGpus = (isSizeClass(sizeClass) && isGpuSizeClass(sizeClass)) || hasAccelerator;
  if (wantsGpus && gpus.size === 0) {
    return {
      field: parts.path(hasAccelerator ? 'accelerator' : 'sizeClass'),
      message: `the ${variant} variant has no GPUs`,
      specCode: 'DL_ENV_CAPABILITY_UNSUPPORTED',
    };
  }
  if (!isRecord(accelerator)) return undefined;
  const type = gpuTypeSchema.safeParse(accelerator.type);
  if (type.success && !gpus.has(type.data)) {
    return {
      field: `${parts.path('accelerator')}.type`,
      message: `${type.data} is not offered on the ${variant} variant (offered: ${[...gpus.keys()].join(', ')})`,
      specCode: 'DL_ENV_CAPABILITY_UNSUPPORTED',
    };
  }
  return undefined;
}
