import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { refusalOf, testCard as card } from '../../test/support/rate-card';
import { DNS_LABEL_RULE, environmentRequestShape } from './environment';
import { parsePricedRequest, validateEnvironmentRequest } from './pricing';

/** The Environment specification's rules, each with its finding, field and codes. */

const accept = (input: unknown) => validateEnvironmentRequest(card, input);
const refuse = (input: unknown) => refusalOf(() => validateEnvironmentRequest(card, input));
const INVALID = { code: 'DL_BILLING_REQUEST_INVALID', status: 400, details: { specCode: 'DL_ENV_SPEC_INVALID' } };
const UNSUPPORTED = { code: 'DL_BILLING_CAPABILITY_UNSUPPORTED', status: 422, details: { specCode: 'DL_ENV_CAPABILITY_UNSUPPORTED' } };
const specInvalid = (field: string, message: string) => ({ field, message, specCode: 'DL_ENV_SPEC_INVALID' });
const unsupported = (field: string, message: string) => ({ field, message, specCode: 'DL_ENV_CAPABILITY_UNSUPPORTED' });

const short = (environment: Record<string, unknown>, variant = 'modal') => ({ variant, environment: { name: 'torch', ...environment } });
const T4 = { type: 'T4', count: 1, cuda: '12.8' };
const doc = (spec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'environments.datalayer.io/v1alpha1',
  kind: 'Environment',
  metadata: { name: 'torch', labels: { team: 'ml' } },
  spec,
  ...extra,
});

describe('metadata.name / environment.name: a DNS-1123 label, reserved prefixes refused', () => {
  it('accepts labels of lowercase letters, digits and "-" up to 63 characters', () => {
    for (const name of ['a', '0', 'py-3', 'python-simple', 'a'.repeat(63), 'kube', 'dl', 'system1', 'my-kube-env']) {
      expect(accept({ variant: 'e2b', environment: { name, sizeClass: 'small' } }).environment.name).toBe(name);
    }
  });

  it('refuses anything else, with the rule as the finding', () => {
    for (const name of ['My Env!! _', 'Torch', 'a_b', 'a.b', '-a', 'a-', '', ' ', 'a'.repeat(64), 'é']) {
      expect(refuse({ variant: 'e2b', environment: { name, sizeClass: 'small' } })).toEqual({
        ...INVALID,
        findings: [specInvalid('environment.name', DNS_LABEL_RULE)],
      });
    }
  });

  it('refuses the reserved prefixes datalayer-, dl-, kube- and system-', () => {
    for (const prefix of ['datalayer-', 'dl-', 'kube-', 'system-']) {
      expect(refuse({ variant: 'e2b', environment: { name: `${prefix}foo`, sizeClass: 'small' } })).toEqual({
        ...INVALID,
        findings: [
          specInvalid('environment.name', `must not start with "${prefix}": the prefixes datalayer-, dl-, kube-, system- are reserved`),
        ],
      });
    }
    expect(
      refuse({ variant: 'e2b', environment: doc({ resources: { sizeClass: 'small' } }, { metadata: { name: 'kube-foo' } }) }).findings,
    ).toEqual([
      specInvalid('environment.metadata.name', 'must not start with "kube-": the prefixes datalayer-, dl-, kube-, system- are reserved'),
    ]);
  });
});

describe('resources.accelerator: "none" or {type, count, cuda}, cuda the approved base\'s version', () => {
  it('reads "none" (and null) as no accelerator, on a CPU class with no finding', () => {
    expect(accept(short({ sizeClass: 'small', accelerator: 'none' })).environment).toEqual({ name: 'torch', sizeClass: 'small' });
    expect(refuse(short({ sizeClass: 'gpu-small', accelerator: 'none' }))).toEqual({
      ...INVALID,
      findings: [specInvalid('environment.accelerator', 'is required for the gpu-small size class')],
    });
    expect(refuse(short({ sizeClass: 'gpu-small', accelerator: 'T4' })).findings).toEqual([
      specInvalid('environment.accelerator', 'must be "none" or an object {type, count, cuda}'),
    ]);
  });

  it('needs cuda with an accelerator', () => {
    expect(refuse(short({ sizeClass: 'gpu-large', accelerator: { type: 'A100-80GB', count: 1 } }))).toEqual({
      ...INVALID,
      findings: [specInvalid('environment.accelerator.cuda', 'is required with an accelerator')],
    });
  });

  it('accepts only the CUDA version the approved CUDA base carries (12.8)', () => {
    expect(
      accept(short({ sizeClass: 'gpu-large', accelerator: { type: 'A100-80GB', count: 1, cuda: '12.8' } })).environment.accelerator?.cuda,
    ).toBe('12.8');
    for (const cuda of ['11.0', '12.4', '12.8.1', '13']) {
      expect(refuse(short({ sizeClass: 'gpu-large', accelerator: { type: 'A100-80GB', count: 1, cuda } }))).toEqual({
        ...INVALID,
        findings: [
          specInvalid(
            'environment.accelerator.cuda',
            'must be the CUDA version of an approved CUDA base (datalayer/python-cuda:2026.09: 12.8)',
          ),
        ],
      });
    }
  });

  it("with a named base, accepts only that base's CUDA version", () => {
    const base = { ref: 'datalayer/python-cuda:2026.09' };
    expect(accept(short({ sizeClass: 'gpu-small', accelerator: T4, base })).environment.base).toEqual(base);
    expect(refuse(short({ sizeClass: 'gpu-small', accelerator: { ...T4, cuda: '12.4' }, base }))).toEqual({
      ...INVALID,
      findings: [specInvalid('environment.accelerator.cuda', 'must be 12.8, the CUDA version of the base datalayer/python-cuda:2026.09')],
    });
  });
});

describe('a GPU class needs a CUDA base (when base.ref is named)', () => {
  it('refuses datalayer/python-cpu with a GPU class, accepts it with a CPU class', () => {
    expect(refuse(short({ sizeClass: 'gpu-small', accelerator: T4, base: { ref: 'datalayer/python-cpu:2026.09' } }))).toEqual({
      ...INVALID,
      findings: [
        specInvalid(
          'environment.base.ref',
          'datalayer/python-cpu:2026.09 has no CUDA; the gpu-small size class needs a CUDA base (datalayer/python-cuda:2026.09: 12.8)',
        ),
      ],
    });
    expect(accept(short({ sizeClass: 'small', base: { ref: 'datalayer/python-cpu' } })).environment.base?.ref).toBe('datalayer/python-cpu');
  });

  it('refuses a GPU class on a base that is not approved as unsupported; a CPU class may use any base', () => {
    expect(refuse(short({ sizeClass: 'gpu-small', accelerator: T4, base: { ref: 'nvidia/cuda:11.8-runtime' } }))).toEqual({
      ...UNSUPPORTED,
      findings: [
        unsupported(
          'environment.base.ref',
          'nvidia/cuda:11.8-runtime is not an approved CUDA base (approved: datalayer/python-cuda:2026.09: 12.8)',
        ),
      ],
    });
    expect(accept(short({ sizeClass: 'medium', base: { ref: 'python:3.13-slim', digest: 'sha256:00' } })).environment.base).toEqual({
      ref: 'python:3.13-slim',
      digest: 'sha256:00',
    });
    expect(refuse(short({ sizeClass: 'small', base: { ref: 'a b' } })).findings).toEqual([
      specInvalid('environment.base.ref', 'must be an image reference such as "datalayer/python-cuda:2026.09"'),
    ]);
  });
});

describe('resources.hints: positive numbers within the size class', () => {
  it('accepts hints up to the size class (small: 1 vCPU, 1 GiB; large: 7 vCPU, 30 GiB)', () => {
    expect(accept(short({ sizeClass: 'small', hints: { cpu: 0.5, memoryGi: 1, diskGi: 10 } })).environment.hints).toEqual({
      cpu: 0.5,
      memoryGi: 1,
      diskGi: 10,
    });
    expect(accept(short({ sizeClass: 'large', hints: { cpu: 7, memoryGi: 30 } })).environment.hints).toEqual({ cpu: 7, memoryGi: 30 });
  });

  it('refuses a hint beyond its size class, naming the class', () => {
    expect(refuse(short({ sizeClass: 'small', hints: { cpu: 2, memoryGi: 1.5, diskGi: 10 } }))).toEqual({
      ...INVALID,
      findings: [
        specInvalid('environment.hints.cpu', 'must be at most 1, within the small size class (1 vCPU, 1 GiB memory, 10 GiB disk)'),
        specInvalid('environment.hints.memoryGi', 'must be at most 1, within the small size class (1 vCPU, 1 GiB memory, 10 GiB disk)'),
      ],
    });
    expect(refuse(short({ sizeClass: 'large', hints: { memoryGi: 31 } })).findings).toEqual([
      specInvalid('environment.hints.memoryGi', 'must be at most 30, within the large size class (7 vCPU, 30 GiB memory, 50 GiB disk)'),
    ]);
  });

  it('refuses hints that are not positive numbers, and unknown hints', () => {
    expect(refuse(short({ sizeClass: 'medium', hints: { cpu: 0, memoryGi: -1, diskGi: '5' } })).findings).toEqual([
      specInvalid('environment.hints.cpu', 'must be a positive number'),
      specInvalid('environment.hints.memoryGi', 'must be a positive number'),
      specInvalid('environment.hints.diskGi', 'must be a positive number'),
    ]);
    expect(refuse(short({ sizeClass: 'medium', hints: { gpus: 1 } })).findings).toEqual([
      specInvalid('environment.hints.gpus', 'is not a known field'),
    ]);
  });
});

describe('compatibility.variants.required / optional: the launch variant is one of them', () => {
  const compat = (variants: unknown) => ({ sizeClass: 'small', compatibility: { variants } });

  it('accepts a variant listed as required or optional', () => {
    expect(accept(short(compat({ required: ['e2b'], optional: ['datalayer'] }), 'e2b')).environment.compatibility).toEqual({
      variants: { required: ['e2b'], optional: ['datalayer'] },
    });
    expect(accept(short(compat({ optional: ['datalayer'] }), 'datalayer')).variant).toBe('datalayer');
    expect(accept(short({ sizeClass: 'small', compatibility: { python: '3.13' } }, 'modal')).variant).toBe('modal');
  });

  it('refuses another variant as unsupported, on the variant field', () => {
    expect(refuse(short(compat({ required: ['e2b'], optional: ['datalayer'] }), 'modal'))).toEqual({
      ...UNSUPPORTED,
      findings: [unsupported('variant', "modal is not one of the environment's variants (required: e2b; optional: datalayer)")],
    });
  });

  it('refuses a malformed compatibility block', () => {
    expect(refuse(short(compat({ required: 'e2b', preferred: [] }), 'e2b')).findings).toEqual([
      specInvalid('environment.compatibility.variants.required', 'must be a list of variants'),
      specInvalid('environment.compatibility.variants.preferred', 'is not a known field'),
    ]);
  });
});

describe('the whole Environment document, as JSON or YAML', () => {
  const gpuSpec = {
    base: { ref: 'datalayer/python-cuda:2026.09' },
    resources: { sizeClass: 'gpu-small', accelerator: T4, hints: { cpu: 8 } },
    compatibility: { variants: { required: ['modal'] } },
    packages: ['torch'],
  };

  it('accepts it and keeps what billing reads, with the digest of its spec', () => {
    const { environment } = accept({ variant: 'modal', environment: doc(gpuSpec) });
    expect(environment).toEqual({
      name: 'torch',
      sizeClass: 'gpu-small',
      accelerator: T4,
      hints: { cpu: 8 },
      base: { ref: 'datalayer/python-cuda:2026.09' },
      compatibility: { variants: { required: ['modal'], optional: [] } },
      specDigest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    const yaml = `apiVersion: environments.datalayer.io/v1alpha1
kind: Environment
metadata:
  name: torch
spec:
  base:
    ref: datalayer/python-cuda:2026.09
  resources:
    sizeClass: gpu-small
    accelerator: {type: T4, count: 1, cuda: "12.8"}
    hints: {cpu: 8}
  compatibility:
    variants:
      required: [modal]
  packages: [torch]
`;
    expect(accept({ variant: 'modal', environment: yaml }).environment).toEqual(environment);
    expect(accept({ variant: 'modal', environment: JSON.stringify(doc(gpuSpec)) }).environment).toEqual(environment);
  });

  it('names every finding by its path in the document', () => {
    expect(
      refuse({
        variant: 'e2b',
        environment: doc(
          { resources: { sizeClass: 'gpu-small', accelerator: { type: 'T4', count: 0 }, hints: { cpu: 9 } } },
          {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name: 'Torch' },
          },
        ),
      }),
    ).toEqual({
      ...INVALID,
      findings: [
        specInvalid('environment.apiVersion', 'must be environments.datalayer.io/v1alpha1'),
        specInvalid('environment.kind', 'must be Environment'),
        specInvalid('environment.metadata.name', DNS_LABEL_RULE),
        specInvalid('environment.spec.resources.accelerator.count', 'must be an integer from 1 to 8'),
        specInvalid('environment.spec.resources.accelerator.cuda', 'is required with an accelerator'),
        specInvalid(
          'environment.spec.resources.hints.cpu',
          'must be at most 8, within the gpu-small size class (8 vCPU, 32 GiB memory, 100 GiB disk)',
        ),
        unsupported('environment.spec.resources.accelerator', 'the e2b variant has no GPUs'),
      ],
    });
  });

  it('refuses a document without its parts, or with unknown top-level keys', () => {
    expect(refuse({ variant: 'modal', environment: { apiVersion: 'environments.datalayer.io/v1alpha1', status: {} } }).findings).toEqual([
      specInvalid('environment.kind', 'is required'),
      specInvalid('environment.metadata', 'is required'),
      specInvalid('environment.spec', 'is required'),
      specInvalid('environment.status', 'is not a known field'),
    ]);
    expect(refuse({ variant: 'modal', environment: doc({ image: 'x' }) }).findings).toEqual([
      specInvalid('environment.spec.resources', 'is required'),
    ]);
  });

  it('refuses text that is not one YAML or JSON document', () => {
    for (const text of ['spec: [', 'a: 1\na: 2', '---\na: 1\n---\nb: 2', '{"a": 1', '!!binary aGk=']) {
      const r = refuse({ variant: 'modal', environment: text });
      expect(r).toMatchObject(INVALID);
      expect(r.findings).toEqual([
        {
          field: 'environment',
          message: expect.stringMatching(/^is not a YAML or JSON Environment document: /),
          specCode: 'DL_ENV_SPEC_INVALID',
        },
      ]);
    }
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x]',
      ...Array.from(
        { length: 8 },
        (_, i) =>
          `${'b'.repeat(i + 1)}: &${'b'.repeat(i + 1)} [*${i === 0 ? 'a' : 'b'.repeat(i)}, *${i === 0 ? 'a' : 'b'.repeat(i)}, *${i === 0 ? 'a' : 'b'.repeat(i)}, *${i === 0 ? 'a' : 'b'.repeat(i)}, *${i === 0 ? 'a' : 'b'.repeat(i)}, *${i === 0 ? 'a' : 'b'.repeat(i)}, *${i === 0 ? 'a' : 'b'.repeat(i)}, *${i === 0 ? 'a' : 'b'.repeat(i)}, *${i === 0 ? 'a' : 'b'.repeat(i)}]`,
      ),
    ].join('\n');
    expect(refuse({ variant: 'modal', environment: bomb }).findings).toEqual([
      {
        field: 'environment',
        message: expect.stringMatching(/^is not a YAML or JSON Environment document: /),
        specCode: 'DL_ENV_SPEC_INVALID',
      },
    ]);
    expect(refuse({ variant: 'modal', environment: 'small' }).findings).toEqual([
      specInvalid('environment', 'must be an object {name, sizeClass, accelerator?} or an Environment document'),
    ]);
  });

  it('reads YAML 1.2: an unquoted version is a number and refused as one; yes stays a string', () => {
    const yaml = (cuda: string, name = 'torch') =>
      `apiVersion: environments.datalayer.io/v1alpha1\nkind: Environment\nmetadata: {name: ${name}}\nspec:\n  resources: {sizeClass: gpu-small, accelerator: {type: T4, count: 1, cuda: ${cuda}}}\n`;
    expect(refuse({ variant: 'modal', environment: yaml('12.8') }).findings).toEqual([
      specInvalid('environment.spec.resources.accelerator.cuda', 'must be a CUDA version string such as "12.8"'),
    ]);
    expect(accept({ variant: 'modal', environment: yaml('"12.8"', 'yes') }).environment.name).toBe('yes');
  });
});

describe('codes beside the billing code', () => {
  it('puts specCode only on findings about the environment, and on the error when it has any', () => {
    const reservation = z.strictObject({ accountId: z.string().min(1, 'must not be empty'), ...environmentRequestShape });
    expect(
      refusalOf(() =>
        parsePricedRequest(reservation, { accountId: '', variant: 'e2b', environment: { name: 'x', sizeClass: 'small' } }, card),
      ),
    ).toEqual({
      code: 'DL_BILLING_REQUEST_INVALID',
      status: 400,
      details: {},
      findings: [{ field: 'accountId', message: 'must not be empty' }],
    });
    expect(refusalOf(() => parsePricedRequest(reservation, { accountId: 'a', variant: 'e2b' }, card))).toEqual({
      code: 'DL_BILLING_REQUEST_INVALID',
      status: 400,
      details: {},
      findings: [{ field: 'environment', message: 'is required' }],
    });
    expect(refusalOf(() => validateEnvironmentRequest(card, { variant: 'fly', environment: { name: 'x', sizeClass: 'small' } }))).toEqual({
      code: 'DL_BILLING_CAPABILITY_UNSUPPORTED',
      status: 422,
      details: {},
      findings: [{ field: 'variant', message: 'fly is not a variant the rate card prices (datalayer, e2b, modal, daytona)' }],
    });
    expect(
      refusalOf(() =>
        validateEnvironmentRequest(card, { variant: 'daytona', environment: { name: 'x', sizeClass: 'gpu-small', accelerator: T4 } }),
      ),
    ).toEqual({
      ...UNSUPPORTED,
      findings: [unsupported('environment.accelerator.type', 'T4 is not offered on the daytona variant (offered: H100, RTX-4090)')],
    });
    expect(
      refusalOf(() =>
        validateEnvironmentRequest(card, { variant: 'modal', environment: { name: 'x', sizeClass: 'small', hints: { cpu: 3 } } }, 'data'),
      ),
    ).toMatchObject({
      ...INVALID,
      findings: [specInvalid('data.environment.hints.cpu', expect.stringContaining('must be at most 1') as unknown as string)],
    });
  });
});
