import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BillingException } from 'src/common/errors/billing.exception';
import { DNS_LABEL_RULE, environmentRequestSchema, environmentRequestShape, SIZE_CLASSES, type Environment } from './environment';
import { environmentChecks } from './environment-checks';
import { parsePricedRequest, priceEnvironment, validateEnvironmentRequest } from './pricing';
import { TEST_BASES, TEST_RESOURCES, testCard } from '../../test/support/rate-card';
import { gpuRates, parseRateCard, RateCard } from './rate-card';

const card = testCard;

/** The refusal's code, status and findings; `specCode`s are asserted in environment.spec.ts. */
function refusal(fn: () => unknown): { code: string; status: number; findings: { field: string; message: string }[] } {
  try {
    fn();
  } catch (error) {
    if (!(error instanceof BillingException)) throw error;
    return { code: error.code, status: error.status, findings: error.findings.map(({ field, message }) => ({ field, message })) };
  }
  throw new Error('expected a refusal');
}

const check = (input: unknown) => refusal(() => validateEnvironmentRequest(card, input));
const fields = (input: unknown) => check(input).findings.map((f) => f.field);

const gpu = (variant: string, type: string, count = 1, sizeClass = 'gpu-small') => ({
  variant,
  environment: { name: 'ai-env', sizeClass, accelerator: { type, count, cuda: '12.8' } },
});

describe('validateEnvironmentRequest: accepted', () => {
  it('accepts CPU classes on every variant and offered GPUs on GPU variants', () => {
    for (const variant of ['datalayer', 'e2b', 'modal', 'daytona']) {
      for (const sizeClass of ['small', 'medium', 'large']) {
        expect(validateEnvironmentRequest(card, { variant, environment: { name: 'python', sizeClass } })).toEqual({
          variant,
          environment: { name: 'python', sizeClass },
        });
      }
    }
    expect(validateEnvironmentRequest(card, gpu('modal', 'H100', 8, 'gpu-large')).environment.accelerator).toEqual({
      type: 'H100',
      count: 8,
      cuda: '12.8',
    });
    expect(validateEnvironmentRequest(card, gpu('daytona', 'RTX-4090')).variant).toBe('daytona');
  });

  it('accepts cuda and reads accelerator: null as no accelerator', () => {
    const withCuda = validateEnvironmentRequest(card, {
      variant: 'modal',
      environment: { name: 'ai', sizeClass: 'gpu-small', accelerator: { type: 'T4', count: 1, cuda: '12.8' } },
    });
    expect(withCuda.environment.accelerator?.cuda).toBe('12.8');
    const nulled = validateEnvironmentRequest(card, { variant: 'e2b', environment: { name: 'py', sizeClass: 'small', accelerator: null } });
    expect(nulled.environment).toEqual({ name: 'py', sizeClass: 'small' });
    expect('accelerator' in nulled.environment && nulled.environment.accelerator !== undefined).toBe(false);
  });
});

describe('validateEnvironmentRequest: malformed → DL_BILLING_REQUEST_INVALID (400)', () => {
  it('refuses an unknown size class', () => {
    const r = check({ variant: 'modal', environment: { name: 'x', sizeClass: 'xlarge' } });
    expect(r.code).toBe('DL_BILLING_REQUEST_INVALID');
    expect(r.status).toBe(400);
    expect(r.findings).toEqual([{ field: 'environment.sizeClass', message: 'must be one of small, medium, large, gpu-small, gpu-large' }]);
  });

  it('names every missing field', () => {
    expect(check({}).findings).toEqual([
      { field: 'variant', message: 'is required' },
      { field: 'environment', message: 'is required' },
    ]);
    expect(check({ variant: 'modal', environment: {} }).findings).toEqual([
      { field: 'environment.name', message: 'is required' },
      { field: 'environment.sizeClass', message: 'is required' },
    ]);
    expect(check({ variant: 'modal', environment: { name: 'x', sizeClass: 'gpu-small', accelerator: {} } }).findings).toEqual([
      { field: 'environment.accelerator.type', message: 'is required' },
      { field: 'environment.accelerator.count', message: 'is required' },
      { field: 'environment.accelerator.cuda', message: 'is required with an accelerator' },
    ]);
    expect(check(undefined).findings).toEqual([{ field: 'body', message: 'is required' }]);
  });

  it('refuses wrong types', () => {
    expect(fields({ variant: 5, environment: { name: 3, sizeClass: 'small' } })).toEqual(['variant', 'environment.name']);
    expect(fields({ variant: 'modal', environment: 'small' })).toEqual(['environment']);
    expect(fields(gpu('modal', 'T4', '2' as unknown as number))).toEqual(['environment.accelerator.count']);
    expect(fields({ variant: 'modal', environment: { name: 'x', sizeClass: 'gpu-small', accelerator: 'T4' } })).toEqual([
      'environment.accelerator',
    ]);
    expect(
      fields({ variant: 'modal', environment: { name: 'x', sizeClass: 'gpu-small', accelerator: { type: 'T4', count: 1, cuda: 12.4 } } }),
    ).toEqual(['environment.accelerator.cuda']);
  });

  it('needs an accelerator count from 1 to 8', () => {
    for (const count of [0, 9, -1, 1.5]) {
      expect(check(gpu('modal', 'T4', count)).findings).toEqual([
        { field: 'environment.accelerator.count', message: 'must be an integer from 1 to 8' },
      ]);
    }
  });

  it('refuses a GPU class without an accelerator and an accelerator without a GPU class', () => {
    expect(check({ variant: 'modal', environment: { name: 'x', sizeClass: 'gpu-large' } })).toMatchObject({
      code: 'DL_BILLING_REQUEST_INVALID',
      findings: [{ field: 'environment.accelerator', message: 'is required for the gpu-large size class' }],
    });
    expect(
      check({ variant: 'modal', environment: { name: 'x', sizeClass: 'large', accelerator: { type: 'T4', count: 1, cuda: '12.8' } } }),
    ).toMatchObject({
      code: 'DL_BILLING_REQUEST_INVALID',
      findings: [{ field: 'environment.accelerator', message: expect.stringContaining('needs a GPU size class') }],
    });
  });

  it('refuses ill-formed identifiers, blank names and unknown keys', () => {
    expect(fields({ variant: '', environment: { name: ' ', sizeClass: 'small' } })).toEqual(['variant', 'environment.name']);
    expect(fields(gpu('modal', 'H 100'))).toEqual(['environment.accelerator.type']);
    expect(check({ variant: 'modal', environment: { name: 'x', sizeClass: 'small', image: 'y' }, extra: 1 }).findings).toEqual([
      { field: 'environment.image', message: 'is not a known field' },
      { field: 'extra', message: 'is not a known field' },
    ]);
  });

  it('lists every finding of a request with many problems', () => {
    expect(
      fields({
        variant: 'modal',
        environment: { name: '', sizeClass: 'gpu-small', accelerator: { type: 'T4', count: 0, cuda: 'twelve' } },
      }),
    ).toEqual(['environment.name', 'environment.accelerator.count', 'environment.accelerator.cuda']);
    expect(fields({ variant: 'modal', environment: { name: '', sizeClass: 'gpu-small', color: 'red' } })).toEqual([
      'environment.name',
      'environment.color',
      'environment.accelerator',
    ]);
  });

  it('refuses with REQUEST_INVALID listing the capability findings too when both kinds occur', () => {
    expect(check(gpu('e2b', 'T4', 0))).toEqual({
      code: 'DL_BILLING_REQUEST_INVALID',
      status: 400,
      findings: [
        { field: 'environment.accelerator.count', message: 'must be an integer from 1 to 8' },
        { field: 'environment.accelerator', message: 'the e2b variant has no GPUs' },
      ],
    });
    expect(fields({ variant: 'datalayer', environment: { name: 'x', sizeClass: 'gpu-small' } })).toEqual([
      'environment.accelerator',
      'environment.sizeClass',
    ]);
    expect(
      check({ variant: 'daytona', environment: { name: '', sizeClass: 'gpu-small', accelerator: { type: 'T4', count: 1, cuda: '11.0' } } })
        .findings,
    ).toEqual([
      { field: 'environment.name', message: DNS_LABEL_RULE },
      {
        field: 'environment.accelerator.cuda',
        message: 'must be the CUDA version of an approved CUDA base (datalayer/python-cuda:2026.09: 12.8)',
      },
      { field: 'environment.accelerator.type', message: 'T4 is not offered on the daytona variant (offered: H100, RTX-4090)' },
    ]);
  });
});

describe('validateEnvironmentRequest: valid but unpriceable → DL_BILLING_CAPABILITY_UNSUPPORTED (422)', () => {
  it('refuses GPUs on datalayer and e2b', () => {
    for (const variant of ['datalayer', 'e2b']) {
      expect(check(gpu(variant, 'H100'))).toEqual({
        code: 'DL_BILLING_CAPABILITY_UNSUPPORTED',
        status: 422,
        findings: [{ field: 'environment.accelerator', message: `the ${variant} variant has no GPUs` }],
      });
    }
  });

  it('refuses a GPU type the variant does not offer, exactly as named', () => {
    expect(check(gpu('daytona', 'T4'))).toMatchObject({
      code: 'DL_BILLING_CAPABILITY_UNSUPPORTED',
      findings: [{ field: 'environment.accelerator.type', message: 'T4 is not offered on the daytona variant (offered: H100, RTX-4090)' }],
    });
    expect(check(gpu('modal', 'RTX-4090')).code).toBe('DL_BILLING_CAPABILITY_UNSUPPORTED');
    expect(check(gpu('modal', 'TPU-v5')).code).toBe('DL_BILLING_CAPABILITY_UNSUPPORTED');
    expect(check(gpu('modal', 'h100')).code).toBe('DL_BILLING_CAPABILITY_UNSUPPORTED');
  });

  it('refuses a well-formed variant the rate card does not price', () => {
    for (const variant of ['fly', 'E2B', 'constructor', 'toString']) {
      expect(check({ variant, environment: { name: 'x', sizeClass: 'small' } })).toEqual({
        code: 'DL_BILLING_CAPABILITY_UNSUPPORTED',
        status: 422,
        findings: [{ field: 'variant', message: `${variant} is not a variant the rate card prices (datalayer, e2b, modal, daytona)` }],
      });
    }
  });
});

describe('inside a larger request schema', () => {
  const reservation = z.strictObject({
    accountId: z.string().min(1),
    ...environmentRequestShape,
    minutes: z.number().int().min(1).max(1440).default(10),
  });

  it('parses the whole body and refuses with every finding, prefixed where asked', () => {
    const ok = parsePricedRequest(reservation, { accountId: 'a', variant: 'modal', environment: { name: 'x', sizeClass: 'small' } }, card);
    expect(ok.minutes).toBe(10);
    expect(
      refusal(() => parsePricedRequest(reservation, { accountId: '', ...gpu('e2b', 'T4'), minutes: 0 }, card)).findings.map((f) => f.field),
    ).toEqual(['accountId', 'minutes', 'environment.accelerator']);
    expect(refusal(() => parsePricedRequest(environmentRequestSchema, gpu('e2b', 'T4'), card, 'data'))).toMatchObject({
      code: 'DL_BILLING_CAPABILITY_UNSUPPORTED',
      findings: [{ field: 'data.environment.accelerator' }],
    });
  });

  it('environmentChecks ignores what is not there to judge', () => {
    const none = { invalid: [], unsupported: [] };
    expect(environmentChecks(card, null)).toEqual(none);
    expect(environmentChecks(card, { variant: 3 })).toEqual(none);
    expect(environmentChecks(card, { variant: 'modal', environment: [] })).toEqual(none);
    expect(environmentChecks(card, { variant: 'modal', environment: 'a: [' })).toEqual(none);
    expect(
      environmentChecks(card, {
        variant: 'modal',
        environment: { sizeClass: 'gpu-small', accelerator: { type: 7, cuda: 12 }, hints: { cpu: -4 } },
      }),
    ).toEqual(none);
  });
});

describe('priceEnvironment', () => {
  const env = (sizeClass: Environment['sizeClass'], accelerator?: Environment['accelerator']): Environment => ({
    name: 'e',
    sizeClass,
    ...(accelerator ? { accelerator } : {}),
  });

  it('prices CPU classes at the size-class rate on every variant', () => {
    expect(priceEnvironment(card, 'e2b', env('small'))).toEqual({ ratePerHourMicros: 1_000_000n, rateCardVersion: 'test-1' });
    expect(priceEnvironment(card, 'datalayer', env('medium')).ratePerHourMicros).toBe(2_000_000n);
    expect(priceEnvironment(card, 'modal', env('large')).ratePerHourMicros).toBe(7_000_000n);
  });

  it('prices GPU classes as base + accelerator rate × count', () => {
    expect(priceEnvironment(card, 'modal', env('gpu-small', { type: 'H100', count: 2, cuda: '12.8' })).ratePerHourMicros).toBe(90_000_000n);
    expect(priceEnvironment(card, 'modal', env('gpu-large', { type: 'A100-80GB', count: 3, cuda: '12.8' })).ratePerHourMicros).toBe(
      96_500_000n,
    );
    expect(priceEnvironment(card, 'daytona', env('gpu-large', { type: 'H100', count: 1, cuda: '12.8' })).ratePerHourMicros).toBe(
      58_000_000n,
    );
  });

  it('holds for every offered GPU, class and count', () => {
    const offers = card.variants.flatMap((variant) => [...gpuRates(card, variant)].map(([type, rate]) => ({ variant, type, rate })));
    fc.assert(
      fc.property(
        fc.constantFrom(...offers),
        fc.constantFrom('gpu-small' as const, 'gpu-large' as const),
        fc.integer({ min: 1, max: 8 }),
        ({ variant, type, rate }, sizeClass, count) => {
          const price = priceEnvironment(card, variant, env(sizeClass, { type, count, cuda: '12.8' }));
          expect(price.ratePerHourMicros).toBe(card.sizeClasses[sizeClass] + rate * BigInt(count));
        },
      ),
    );
  });

  it('uses the rate card current version and names it', () => {
    const [v1, v2] = parseRateCard({
      versions: ['2026-01-01T00:00:00Z', '2026-07-01T00:00:00Z'].map((effectiveFrom, i) => ({
        version: `v${i + 1}`,
        effectiveFrom,
        sizeClasses: {
          small: `${i + 1}.000000`,
          medium: '2.000000',
          large: '7.000000',
          'gpu-small': '10.000000',
          'gpu-large': '20.000000',
        },
        resources: TEST_RESOURCES,
        variants: ['e2b'],
      })),
      bases: TEST_BASES,
    });
    const rateCard = new RateCard([v1!, v2!], () => new Date('2026-08-01T00:00:00Z'));
    expect(priceEnvironment(rateCard, 'e2b', env('small'))).toEqual({ ratePerHourMicros: 2_000_000n, rateCardVersion: 'v2' });
    expect(priceEnvironment(rateCard.requireVersion('v1'), 'e2b', env('small'))).toEqual({
      ratePerHourMicros: 1_000_000n,
      rateCardVersion: 'v1',
    });
  });

  it('refuses what validation refuses, with the same codes', () => {
    expect(refusal(() => priceEnvironment(card, 'e2b', env('gpu-small', { type: 'T4', count: 1, cuda: '12.8' }))).code).toBe(
      'DL_BILLING_CAPABILITY_UNSUPPORTED',
    );
    expect(refusal(() => priceEnvironment(card, 'modal', env('gpu-small'))).code).toBe('DL_BILLING_REQUEST_INVALID');
  });

  it('covers every size class', () => {
    for (const sizeClass of SIZE_CLASSES) expect(card.sizeClasses[sizeClass] > 0n).toBe(true);
  });
});
