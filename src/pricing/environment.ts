import { z } from 'zod';

/**
 * The shape of what a runtime asks for (`{variant, environment: {name, sizeClass, accelerator?}}`),
 * as in the Environment specification. Everything here is a *shape* rule: a request that breaks one
 * is malformed (DL_BILLING_REQUEST_INVALID) whatever the rate card says. Whether a well-formed
 * request can be priced (variant known, GPUs offered) is decided against the rate card in pricing.ts.
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

/** Variants and GPU types are open catalogues (they grow with providers), so any identifier is well formed. */
const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const IDENTIFIER_RULE = 'must be 1-64 characters of letters, digits and _.- starting with a letter or digit';

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

export const acceleratorSchema = z.strictObject(
  {
    type: gpuTypeSchema,
    count: z
      .number({ error: required('must be an integer') })
      .int(`must be an integer from 1 to ${MAX_ACCELERATOR_COUNT}`)
      .min(1, `must be an integer from 1 to ${MAX_ACCELERATOR_COUNT}`)
      .max(MAX_ACCELERATOR_COUNT, `must be an integer from 1 to ${MAX_ACCELERATOR_COUNT}`),
    cuda: z
      .string({ error: 'must be a CUDA version string such as "12.4"' })
      .regex(/^\d{1,2}(\.\d{1,3}){0,2}$/, 'must be a CUDA version string such as "12.4"')
      .optional(),
  },
  { error: required('must be an object {type, count, cuda?}') },
);
export type Accelerator = z.output<typeof acceleratorSchema>;

export const environmentSchema = z
  .strictObject(
    {
      name: z
        .string({ error: required('must be a string') })
        .max(200, 'must be at most 200 characters')
        .refine((v) => v.trim().length > 0, 'must not be empty or blank'),
      sizeClass: sizeClassSchema,
      // null reads as "no accelerator", as JSON clients often send it for an absent optional.
      accelerator: acceleratorSchema
        .nullable()
        .transform((v) => v ?? undefined)
        .optional(),
    },
    { error: required('must be an object {name, sizeClass, accelerator?}') },
  )
  .superRefine(
    (value, ctx) => {
      // Runs even when other fields failed (see `when`), so every finding is listed at once;
      // the value may therefore be malformed and is read defensively.
      const raw = value as Record<string, unknown>;
      if (!isSizeClass(raw.sizeClass)) return;
      const hasAccelerator = raw.accelerator !== undefined && raw.accelerator !== null;
      if (isGpuSizeClass(raw.sizeClass) && !hasAccelerator) {
        ctx.addIssue({
          code: 'custom',
          path: ['accelerator'],
          message: `is required for the ${raw.sizeClass} size class`,
        });
      }
      if (!isGpuSizeClass(raw.sizeClass) && hasAccelerator) {
        ctx.addIssue({
          code: 'custom',
          path: ['accelerator'],
          message: `needs a GPU size class (${GPU_SIZE_CLASSES.join(' or ')}); sizeClass is ${raw.sizeClass}`,
        });
      }
    },
    { when: (payload) => isRecord(payload.value) },
  );
export type Environment = z.output<typeof environmentSchema>;

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
