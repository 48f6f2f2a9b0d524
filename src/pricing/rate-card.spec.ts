import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from 'src/common/config/config';
import { TEST_BASES, TEST_RESOURCES } from '../../test/support/rate-card';
import { tempDir } from '../../test/support/temp-dir';
import { approvedCudaVersions, baseCuda, gpuRates, loadRateCardFile, parseRateCard, RateCard } from './rate-card';

const sizeClasses = {
  small: '1.000000',
  medium: '2.000000',
  large: '7.000000',
  'gpu-small': '10.000000',
  'gpu-large': '20.000000',
};

function version(name: string, effectiveFrom: string, overrides: Record<string, unknown> = {}) {
  return {
    version: name,
    effectiveFrom,
    sizeClasses,
    resources: TEST_RESOURCES,
    variants: ['datalayer', 'e2b', 'modal'],
    accelerators: { modal: { T4: '6.000000' } },
    ...overrides,
  };
}

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('the shipped config/rate-card.json', () => {
  const versions = loadRateCardFile('config/rate-card.json');
  const latest = versions.at(-1)!;

  it('has the contract size-class rates', () => {
    expect(latest.sizeClasses).toEqual({
      small: 1_000_000n,
      medium: 2_000_000n,
      large: 7_000_000n,
      'gpu-small': 10_000_000n,
      'gpu-large': 20_000_000n,
    });
  });

  it('prices the four variants, GPUs only on Modal and Daytona, with the contract GPU types', () => {
    expect([...latest.variants].sort()).toEqual(['datalayer', 'daytona', 'e2b', 'modal']);
    expect(gpuRates(latest, 'datalayer').size).toBe(0);
    expect(gpuRates(latest, 'e2b').size).toBe(0);
    expect([...gpuRates(latest, 'modal').keys()].sort()).toEqual(
      ['A100', 'A100-40GB', 'A100-80GB', 'A10G', 'B200', 'H100', 'H200', 'L4', 'L40S', 'T4'].sort(),
    );
    expect([...gpuRates(latest, 'daytona').keys()].sort()).toEqual(['H100', 'H200', 'RTX-4090', 'RTX-5090', 'RTX-PRO-6000'].sort());
    for (const rates of latest.accelerators.values()) {
      for (const r of rates.values()) expect(r > 0n).toBe(true);
    }
  });
});

describe('parseRateCard', () => {
  it('turns rates into micro-credits and sorts versions by effectiveFrom', () => {
    const versions = parseRateCard({
      bases: TEST_BASES,
      versions: [version('v2', '2027-01-01T00:00:00Z'), version('v1', '2026-01-01T00:00:00Z')],
    });
    expect(versions.map((v) => v.version)).toEqual(['v1', 'v2']);
    expect(gpuRates(versions[0]!, 'modal').get('T4')).toBe(6_000_000n);
  });

  it('names the file and the JSON path of every bad value', () => {
    const problems = problemsOf(() =>
      parseRateCard(
        {
          versions: [
            version('v1', 'yesterday', {
              sizeClasses: { ...sizeClasses, medium: 2 },
              accelerators: { modal: { T4: '6.5' }, nowhere: {} },
            }),
          ],
        },
        'cfg/rc.json',
      ),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^cfg\/rc\.json: versions\.0\.effectiveFrom: /),
        expect.stringMatching(/^cfg\/rc\.json: versions\.0\.sizeClasses\.medium: /),
        expect.stringMatching(/^cfg\/rc\.json: versions\.0\.accelerators\.modal\.T4: .*6 decimals/),
      ]),
    );
  });

  it('refuses a missing size class, an unknown key, an accelerator of an unlisted variant', () => {
    const { large: _large, ...withoutLarge } = sizeClasses;
    expect(
      problemsOf(() =>
        parseRateCard({ bases: TEST_BASES, versions: [version('v1', '2026-01-01T00:00:00Z', { sizeClasses: withoutLarge })] }),
      ),
    ).toEqual([expect.stringContaining('versions.0.sizeClasses.large')]);
    expect(problemsOf(() => parseRateCard({ bases: TEST_BASES, versions: [version('v1', '2026-01-01T00:00:00Z', { extra: 1 })] }))).toEqual(
      [expect.stringContaining('versions.0')],
    );
    expect(
      problemsOf(() =>
        parseRateCard({
          bases: TEST_BASES,
          versions: [version('v1', '2026-01-01T00:00:00Z', { accelerators: { daytona: { H100: '1.000000' } } })],
        }),
      ),
    ).toEqual([expect.stringContaining('versions.0.accelerators.daytona: is not listed in variants')]);
  });

  it('refuses duplicate version names and effective instants, and an empty card', () => {
    expect(
      problemsOf(() =>
        parseRateCard({ bases: TEST_BASES, versions: [version('v1', '2026-01-01T00:00:00Z'), version('v1', '2026-02-01T00:00:00Z')] }),
      ),
    ).toEqual([expect.stringContaining('versions.1.version: is not unique')]);
    expect(
      problemsOf(() =>
        parseRateCard({ bases: TEST_BASES, versions: [version('v1', '2026-01-01T00:00:00Z'), version('v2', '2026-01-01T00:00:00.000Z')] }),
      ),
    ).toEqual([expect.stringContaining('versions.1.effectiveFrom')]);
    expect(problemsOf(() => parseRateCard({ bases: TEST_BASES, versions: [] }))).toEqual([expect.stringContaining('versions')]);
    expect(problemsOf(() => parseRateCard(null))).toEqual([expect.stringContaining('(root)')]);
  });

  it('never lets a name like __proto__ or constructor reach an object prototype', () => {
    const json = JSON.parse(
      `{"bases":${JSON.stringify(TEST_BASES)},"versions":[{"version":"v1","effectiveFrom":"2026-01-01T00:00:00Z","sizeClasses":${JSON.stringify(sizeClasses)},` +
        `"resources":${JSON.stringify(TEST_RESOURCES)},` +
        `"variants":["modal"],"accelerators":{"modal":{"__proto__":"1.000000","T4":"6.000000"}}}]}`,
    ) as unknown;
    let versions: ReturnType<typeof parseRateCard> = [];
    try {
      versions = parseRateCard(json);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError); // refusing it is fine too
      return;
    }
    const modal = gpuRates(versions[0]!, 'modal');
    expect(modal.has('__proto__')).toBe(false);
    expect(modal.get('T4')).toBe(6_000_000n);
    expect(gpuRates(versions[0]!, 'constructor').size).toBe(0);
  });
});

describe('loadRateCardFile', () => {
  const dir = tempDir('rate-card-');

  it('fails naming the file when it is missing or not JSON', () => {
    expect(problemsOf(() => loadRateCardFile(join(dir, 'missing.json')))).toEqual([
      expect.stringMatching(/^RATE_CARD_FILE: cannot read .*missing\.json/),
    ]);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"versions": [');
    expect(problemsOf(() => loadRateCardFile(bad))).toEqual([expect.stringContaining(`${bad}: not valid JSON`)]);
  });
});

describe('RateCard', () => {
  const versions = parseRateCard({
    bases: TEST_BASES,
    versions: [
      version('2026-01', '2026-01-01T00:00:00Z'),
      version('2026-07', '2026-07-01T00:00:00Z', { sizeClasses: { ...sizeClasses, small: '1.500000' } }),
    ],
  });

  it('gives the version in effect now; the new version from its exact effective instant', () => {
    let now = new Date('2026-06-30T23:59:59.999Z');
    const card = new RateCard(versions, () => now);
    expect(card.current().version).toBe('2026-01');
    now = new Date('2026-07-01T00:00:00.000Z');
    expect(card.current().version).toBe('2026-07');
    expect(card.current().sizeClasses.small).toBe(1_500_000n);
  });

  it('prices with the first version before any took effect', () => {
    const card = new RateCard(versions, () => new Date('2020-01-01T00:00:00Z'));
    expect(card.current().version).toBe('2026-01');
  });

  it('finds any version by name, so a reservation is settled with the version it was priced with', () => {
    const card = new RateCard(versions, () => new Date('2027-01-01T00:00:00Z'));
    expect(card.current().version).toBe('2026-07');
    expect(card.version('2026-01')?.sizeClasses.small).toBe(1_000_000n);
    expect(card.requireVersion('2026-01').version).toBe('2026-01');
    expect(card.version('1999-01')).toBeUndefined();
    expect(() => card.requireVersion('1999-01')).toThrow(/1999-01/);
    expect(card.version('constructor')).toBeUndefined();
  });

  it('needs at least one version', () => {
    expect(() => new RateCard([])).toThrow(RangeError);
  });
});

describe('size-class resources and approved bases', () => {
  it('ships the contract sizes (small 1 vCPU / 1 GiB, large 7 vCPU / 30 GiB) and the CUDA base 12.8', () => {
    const latest = loadRateCardFile('config/rate-card.json').at(-1)!;
    expect(latest.resources.small).toMatchObject({ cpu: 1, memoryGi: 1 });
    expect(latest.resources.large).toMatchObject({ cpu: 7, memoryGi: 30 });
    for (const r of Object.values(latest.resources)) expect(r.cpu > 0 && r.memoryGi > 0 && r.diskGi > 0).toBe(true);
    expect(baseCuda(latest, 'datalayer/python-cuda:2026.09')).toEqual({ cuda: '12.8' });
    expect(baseCuda(latest, 'datalayer/python-cpu:2026.09')).toEqual({ cuda: null });
    expect(approvedCudaVersions(latest)).toEqual(['12.8']);
  });

  it('finds a base by its exact reference, else by its repository', () => {
    const [card] = parseRateCard({
      bases: {
        'acme/cpu': { cuda: null },
        'acme/gpu:1': { cuda: '12.4' },
        'acme/gpu:2': { cuda: '12.8' },
        'registry:5000/x/gpu': { cuda: '12.8' },
      },
      versions: [version('v1', '2026-01-01T00:00:00Z')],
    });
    expect(baseCuda(card!, 'acme/gpu:1')).toEqual({ cuda: '12.4' });
    expect(baseCuda(card!, 'acme/gpu:2')).toEqual({ cuda: '12.8' });
    expect(baseCuda(card!, 'acme/gpu:3')).toBeUndefined();
    expect(baseCuda(card!, 'acme/gpu')).toBeUndefined();
    expect(baseCuda(card!, 'acme/cpu:anything')).toEqual({ cuda: null });
    expect(baseCuda(card!, 'acme/cpu@sha256:abc')).toEqual({ cuda: null });
    expect(baseCuda(card!, 'registry:5000/x/gpu:7')).toEqual({ cuda: '12.8' });
    expect(approvedCudaVersions(card!)).toEqual(['12.4', '12.8']);
  });

  it('names every bad resource and base', () => {
    const problems = problemsOf(() =>
      parseRateCard({
        bases: { 'a b': { cuda: '12.8' }, 'acme/gpu:1': { cuda: 'twelve' } },
        versions: [version('v1', '2026-01-01T00:00:00Z', { resources: { ...TEST_RESOURCES, small: { cpu: 0, memoryGi: 1, diskGi: 1 } } })],
      }),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^rate card: bases\.a b: /),
        expect.stringMatching(/^rate card: bases\.acme\/gpu:1\.cuda: /),
        expect.stringMatching(/^rate card: versions\.0\.resources\.small\.cpu: must be a positive number/),
      ]),
    );
    expect(problemsOf(() => parseRateCard({ versions: [version('v1', '2026-01-01T00:00:00Z', { resources: undefined })] }))).toEqual(
      expect.arrayContaining([expect.stringMatching(/bases/), expect.stringMatching(/versions\.0\.resources/)]),
    );
  });
});
