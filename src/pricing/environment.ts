import { z } from 'zod';
import { parseEnvironmentText } from './environment-text';
import { specDigestOf, specOf } from './spec-digest';
import { perUnknownKey } from 'src/common/http/zod-validation.pipe';

/**
 * What a runtime asks for, as in the Environment specification: `{variant, environment}`, where the
 * environment is the short form `{name, sizeClass, accelerator?, hints?, base?, compatibility?}`, a
 * whole Environment document (`apiVersion`, `kind`, `metadata`, `spec`) as JSON, or that document as
 * YAML (or JSON) text. Everything here is a *shape* rule of the specification: a request that breaks
 * one is malformed (DL_BILLING_REQUEST_INVALID, specification code DL_ENV_SPEC_INVALID) whatever the
 * configuration says. The rules that need the rate card (size-class bounds, approved bases, variants,
 * GPUs) are in environment-checks.ts.
 */

export const SIZE_CLASSES = ['small', 'medium', 'large', 'gpu-small', 'gpu-large'] as const;
export type SizeClass = (typeof SIZE_CLASSES)[number];

export const GPU_SIZE_CLASSES = ['gpu-small', 'gpu-large'] as const satisfies readonly SizeClass[];
export type GpuSizeClass = (typeof GPU_SIZE_CLASSES)[number];

export function isGpuSizeClass(sizeClass: SizeClass): sizeClass is GpuSizeClass {
  return (GPU_SIZE_CLASSES as readonly string[]).includes(sizeClass);
}

export function isSizeClass(value: unknown): value is SizeClass {
  return typeof value === 'string' && (SIZE_CLASSES as readonly string[]).includes(value);
}

export const MAX_ACCELERATOR_COUNT = 8;
export const ENVIRONMENT_API_VERSION = 'environments.datalayer.io/v1alpha1';
export const ENVIRONMENT_KIND = 'Environment';
export const RESERVED_NAME_PREFIXES = ['datalayer-', 'dl-', 'kube-', 'system-'] as const;
export const HINT_KEYS = ['cpu', 'memoryGi', 'diskGi'] as const;
export type HintKey = (typeof HINT_KEYS)[number];

/** Variants and GPU types are open catalogues (they grow with providers), so any identifier is well formed. */
const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const IDENTIFIER_RULE = 'must be 1-64 characters of letters, digits and _.- starting with a letter or digit';
/** RFC 1123 label, as Kubernetes checks names: lowercase alphanumerics and '-', alphanumeric at both ends. */
const DNS_1123_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
export const DNS_LABEL_RULE =
  'must be a DNS-1123 label: at most 63 characters of lowercase letters, digits and "-", starting and ending with a letter or digit';
export const CUDA_VERSION = /^\d{1,2}(\.\d{1,3}){0,2}$/;
export const CUDA_RULE = 'must be a CUDA version string such as "12.8"';
const IMAGE_REF = /^[^\s]{1,255}$/;

/** Error messages for a wrong type: "is required" when absent. Other issues keep zod's message. */
const required =
  (otherwise: string) =>
  (issue: { code?: string; input?: unknown }): string | undefined => {
    if (issue.code !== undefined && issue.code !== 'invalid_type' && issue.code !== 'invalid_value') return undefined;
    return issue.input === undefined ? 'is required' : otherwise;
  };

export const variantSchema = z.string({ error: required('must be a string') }).regex(IDENTIFIER, IDENTIFIER_RULE);

export const sizeClassSchema = z.enum(SIZE_CLASSES, {
  error: required(`must be one of ${SIZE_CLASSES.join(', ')}`),
});

export const gpuTypeSchema = z.string({ error: required('must be a string') }).regex(IDENTIFIER, IDENTIFIER_RULE);

/** `metadata.name` of a document, `name` of the short form. */
export const environmentNameSchema = z.string({ error: required('must be a string') }).superRefine((name, ctx) => {
  if (!DNS_1123_LABEL.test(name)) {
    ctx.addIssue({ code: 'custom', message: DNS_LABEL_RULE });
    return;
  }
  const prefix = RESERVED_NAME_PREFIXES.find((p) => name.startsWith(p));
  if (prefix) {
    ctx.addIssue({
      code: 'custom',
      message: `must not start with "${prefix}": the prefixes ${RESERVED_NAME_PREFIXES.join(', ')} are reserved`,
    });
  }
});

export const acceleratorSchema = z.strictObject(
  {
    type: gpuTypeSchema,
    count: z
      .number({ error: required('must be an integer') })
      .int(`must be an integer from 1 to ${MAX_ACCELERATOR_COUNT}`)
      .min(1, `must be an integer from 1 to ${MAX_ACCELERATOR_COUNT}`)
      .max(MAX_ACCELERATOR_COUNT, `must be an integer from 1 to ${MAX_ACCELERATOR_COUNT}`),
    cuda: z
      .string({ error: (issue) => (issue.input === undefined ? 'is required with an accelerator' : CUDA_RULE) })
      .regex(CUDA_VERSION, CUDA_RULE),
  },
  { error: required('must be "none" or an object {type, count, cuda}') },
);
export type Accelerator = z.output<typeof acceleratorSchema>;

/** No accelerator: absent, `"none"` (the specification's word) or null (as JSON clients send an absent optional). */
export function isNoAccelerator(value: unknown): boolean {
  return value === undefined || value === null || value === 'none';
}

const acceleratorFieldSchema = z.preprocess((v) => (isNoAccelerator(v) ? undefined : v), acceleratorSchema.optional());

const hintSchema = z.number({ error: 'must be a positive number' }).positive('must be a positive number');
/** Sizing hints within the size class (its bounds are in the rate card; checked in environment-checks.ts). */
export const hintsSchema = z.strictObject(
  { cpu: hintSchema.optional(), memoryGi: hintSchema.optional(), diskGi: hintSchema.optional() },
  { error: required('must be an object {cpu?, memoryGi?, diskGi?}') },
);
export type Hints = z.output<typeof hintsSchema>;

/** The base image; only `ref` matters to billing (whether it carries CUDA), the rest is kept as sent. */
export const baseSchema = z.looseObject(
  {
    ref: z
      .string({ error: required('must be a string') })
      .regex(IMAGE_REF, 'must be an image reference such as "datalayer/python-cuda:2026.09"'),
  },
  { error: required('must be an object {ref}') },
);
export type Base = z.output<typeof baseSchema>;

const variantListSchema = z.array(variantSchema, { error: 'must be a list of variants' }).default([]);
export const compatibilitySchema = z.looseObject(
  {
    variants: z
      .strictObject(
        { required: variantListSchema, optional: variantListSchema },
        { error: required('must be an object {required?, optional?}') },
      )
      .optional(),
  },
  { error: required('must be an object {variants?}') },
);
export type Compatibility = z.output<typeof compatibilitySchema>;

/**
 * A GPU class needs an accelerator and an accelerator needs a GPU class. Runs even when other fields
 * failed (see `when`), so every finding is listed at once; the value is read defensively.
 */
function pairAccelerator(value: unknown, ctx: z.RefinementCtx): void {
  const raw = value as Record<string, unknown>;
  if (!isSizeClass(raw.sizeClass)) return;
  const hasAccelerator = !isNoAccelerator(raw.accelerator);
  if (isGpuSizeClass(raw.sizeClass) && !hasAccelerator) {
    ctx.addIssue({ code: 'custom', path: ['accelerator'], message: `is required for the ${raw.sizeClass} size class` });
  }
  if (!isGpuSizeClass(raw.sizeClass) && hasAccelerator) {
    ctx.addIssue({
      code: 'custom',
      path: ['accelerator'],
      message: `needs a GPU size class (${GPU_SIZE_CLASSES.join(' or ')}); sizeClass is ${raw.sizeClass}`,
    });
  }
}
const onObjects = { when: (payload: { value: unknown }) => isRecord(payload.value) };

const shortFormSchema = z
  .strictObject(
    {
      name: environmentNameSchema,
      sizeClass: sizeClassSchema,
      accelerator: acceleratorFieldSchema,
      hints: hintsSchema.optional(),
      base: baseSchema.optional(),
      compatibility: compatibilitySchema.optional(),
    },
    { error: required('must be an object {name, sizeClass, accelerator?} or an Environment document') },
  )
  .superRefine(pairAccelerator, onObjects);

const resourcesSchema = z
  .strictObject(
    { sizeClass: sizeClassSchema, accelerator: acceleratorFieldSchema, hints: hintsSchema.optional() },
    { error: required('must be an object {sizeClass, accelerator?, hints?}') },
  )
  .superRefine(pairAccelerator, onObjects);

/** The document: what billing depends on is checked; other metadata and spec keys are kept (and digested) as sent. */
export const environmentDocumentSchema = z.strictObject({
  apiVersion: z.literal(ENVIRONMENT_API_VERSION, { error: required(`must be ${ENVIRONMENT_API_VERSION}`) }),
  kind: z.literal(ENVIRONMENT_KIND, { error: required(`must be ${ENVIRONMENT_KIND}`) }),
  metadata: z.looseObject({ name: environmentNameSchema }, { error: required('must be an object {name, …}') }),
  spec: z.looseObject(
    { base: baseSchema.optional(), resources: resourcesSchema, compatibility: compatibilitySchema.optional() },
    { error: required('must be an object {resources, base?, compatibility?, …}') },
  ),
});
export type EnvironmentDocument = z.output<typeof environmentDocumentSchema>;

/** An environment as billing keeps it, whatever form it came in. */
export interface Environment {
  name: string;
  sizeClass: SizeClass;
  accelerator?: Accelerator;
  hints?: Hints;
  base?: Base;
  compatibility?: Compatibility;
  /**
   * Set when it came as a document: the digest of its whole spec, which may hold more than the
   * fields above. A short form's digest is computed from its fields (spec-digest.ts).
   */
  specDigest?: string;
}

/** An object in the document form rather than the short form (it names any of the document's top-level keys). */
export function isEnvironmentDocument(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && ['apiVersion', 'kind', 'metadata', 'spec'].some((k) => k in value);
}

/** The environment as given (parsed from text when it is a string): the value the findings' paths refer to. */
export function environmentValue(input: unknown): { value: unknown } | { problem: string } {
  return typeof input === 'string' ? parseEnvironmentText(input) : { value: input };
}

function fromDocument(doc: EnvironmentDocument): Environment {
  const { base, resources, compatibility, ...rest } = doc.spec;
  const environment: Environment = {
    name: doc.metadata.name,
    sizeClass: resources.sizeClass,
    ...(resources.accelerator ? { accelerator: resources.accelerator } : {}),
    ...(resources.hints ? { hints: resources.hints } : {}),
    ...(base ? { base } : {}),
    ...(compatibility ? { compatibility } : {}),
  };
  return { ...environment, specDigest: specDigestOf({ ...rest, ...specOf(environment) }) };
}

/** Any of the three forms, into an Environment; findings keep the paths of the form sent. */
export const environmentSchema = z
  .unknown()
  .transform((input, ctx): Environment => {
    const given = environmentValue(input);
    if ('problem' in given) {
      ctx.addIssue({ code: 'custom', message: given.problem });
      return z.NEVER;
    }
    const document = isEnvironmentDocument(given.value);
    const parsed = document ? environmentDocumentSchema.safeParse(given.value) : shortFormSchema.safeParse(given.value);
    if (!parsed.success) {
      for (const issue of perUnknownKey(parsed.error.issues)) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
      return z.NEVER;
    }
    return document ? fromDocument(parsed.data as EnvironmentDocument) : (parsed.data as Environment);
  })
  .meta({
    description:
      'The short form {name, sizeClass, accelerator?, hints?, base?, compatibility?}, an Environment document ' +
      `{apiVersion: ${ENVIRONMENT_API_VERSION}, kind: Environment, metadata, spec}, or that document as YAML text`,
  });

/**
 * The fields `{variant, environment}` to spread into a larger request schema
 * (`z.strictObject({...environmentRequestShape, minutes: ...})`).
 */
export const environmentRequestShape = {
  variant: variantSchema,
  environment: environmentSchema,
};

export const environmentRequestSchema = z.strictObject(environmentRequestShape, {
  error: required('must be an object {variant, environment}'),
});
export type EnvironmentRequest = z.output<typeof environmentRequestSchema>;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
