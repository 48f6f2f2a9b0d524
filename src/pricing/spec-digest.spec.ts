import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from 'src/common/canonical-json';
import { environmentSchema, type Environment } from './environment';
import { environmentDigest, specDigestOf } from './spec-digest';

const parse = (input: unknown): Environment => environmentSchema.parse(input);
const digestOf = (input: unknown): string => environmentDigest(parse(input));
const doc = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'torch' }) => ({
  apiVersion: 'environments.datalayer.io/v1alpha1',
  kind: 'Environment',
  metadata,
  spec,
});

const GPU_SPEC = {
  base: { ref: 'datalayer/python-cuda:2026.09' },
  resources: { sizeClass: 'gpu-small', accelerator: { type: 'T4', count: 1, cuda: '12.8' }, hints: { cpu: 4, memoryGi: 16 } },
  compatibility: { variants: { required: ['modal'], optional: ['daytona'] } },
  packages: ['torch==2.6', 'numpy'],
};

describe('RFC 8785 (JCS) serialization', () => {
  it('serializes the RFC 8785 §3.2.2 sample exactly', () => {
    // The sample input of RFC 8785 §3.2.2, parsed as JSON, and its canonical form.
    const input = JSON.parse(
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
        ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}',
    ) as unknown;
    expect(canonicalJson(input)).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('serializes numbers as RFC 8785 Appendix B lists them (IEEE 754 bits → text)', () => {
    const table: [string, string][] = [
      ['0000000000000000', '0'],
      ['8000000000000000', '0'],
      ['0000000000000001', '5e-324'],
      ['8000000000000001', '-5e-324'],
      ['7fefffffffffffff', '1.7976931348623157e+308'],
      ['ffefffffffffffff', '-1.7976931348623157e+308'],
      ['4340000000000000', '9007199254740992'],
      ['c340000000000000', '-9007199254740992'],
      ['4430000000000000', '295147905179352830000'],
      ['44b52d02c7e14af5', '9.999999999999997e+22'],
      ['44b52d02c7e14af6', '1e+23'],
      ['44b52d02c7e14af7', '1.0000000000000001e+23'],
      ['444b1ae4d6e2ef4e', '999999999999999700000'],
      ['444b1ae4d6e2ef4f', '999999999999999900000'],
      ['444b1ae4d6e2ef50', '1e+21'],
      ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
      ['3eb0c6f7a0b5ed8d', '0.000001'],
      ['41b3de4355555553', '333333333.3333332'],
      ['41b3de4355555554', '333333333.33333325'],
      ['41b3de4355555555', '333333333.3333333'],
      ['41b3de4355555556', '333333333.3333334'],
      ['41b3de4355555557', '333333333.33333343'],
      ['becbf647612f3696', '-0.0000033333333333333333'],
      ['43143ff3c1cb0959', '1424953923781206.2'],
    ];
    for (const [bits, text] of table) expect(canonicalJson(Buffer.from(bits, 'hex').readDoubleBE(0))).toBe(text);
    for (const bits of ['7fffffffffffffff', '7ff0000000000000']) {
      expect(() => canonicalJson(Buffer.from(bits, 'hex').readDoubleBE(0))).toThrow(TypeError);
    }
  });

  it('sorts keys by UTF-16 code units, as the RFC 8785 §3.2.3 sample', () => {
    const keys = ['\u20ac', '\r', '\ufb33', '1', '\ud83d\ude00', '\u0080', '\u00f6'];
    const sorted = canonicalJson(Object.fromEntries(keys.map((k) => [k, 0])));
    expect(JSON.parse(`[${sorted.slice(1, -1).replace(/:0/g, '')}]`)).toEqual([
      '\r',
      '1',
      '\u0080',
      '\u00f6',
      '\u20ac',
      '\ud83d\ude00',
      '\ufb33',
    ]);
  });
});

describe('the spec digest', () => {
  it('is sha256: and the hex SHA-256 of the JCS of spec with its defaults written out', () => {
    const spec = { resources: { sizeClass: 'small', accelerator: 'none' } };
    const expected = `sha256:${createHash('sha256').update('{"resources":{"accelerator":"none","sizeClass":"small"}}').digest('hex')}`;
    expect(specDigestOf(spec)).toBe(expected);
    expect(digestOf(doc({ resources: { sizeClass: 'small' } }))).toBe(expected);
    expect(digestOf({ name: 'python', sizeClass: 'small' })).toBe(expected);
  });

  it('excludes metadata, and the short form digests as the document with the same spec', () => {
    const full = digestOf(doc(GPU_SPEC));
    expect(digestOf(doc(GPU_SPEC, { name: 'other', labels: { team: 'ml' }, version: '3' }))).toBe(full);
    const { packages: _packages, ...billed } = GPU_SPEC;
    const short = { name: 'torch', ...billed.resources, base: billed.base, compatibility: billed.compatibility };
    expect(digestOf(short)).toBe(digestOf(doc(billed)));
    expect(digestOf(short)).not.toBe(full);
  });

  it('does not depend on key order, spacing or the form (JSON object, JSON text, YAML text)', () => {
    const full = digestOf(doc(GPU_SPEC));
    expect(digestOf(JSON.stringify(doc(GPU_SPEC), null, 7))).toBe(full);
    const yaml = [
      'kind: Environment',
      'apiVersion: environments.datalayer.io/v1alpha1',
      'metadata: {name: torch}',
      'spec:',
      '  packages: [torch==2.6, numpy]',
      '  compatibility:',
      '    variants: {optional: [daytona], required: [modal]}',
      '  resources:',
      '    hints: {memoryGi: 16.0, cpu: 4}',
      '    accelerator:',
      '      cuda: "12.8"',
      '      count: 1',
      '      type: T4',
      '    sizeClass: gpu-small',
      '  base:    { ref: "datalayer/python-cuda:2026.09" }',
      '',
    ].join('\n');
    expect(digestOf(yaml)).toBe(full);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), (seed) => {
        expect(digestOf(shuffleKeys(doc(GPU_SPEC), seed))).toBe(full);
      }),
    );
  });

  it('is the same with the defaults spelled out or omitted', () => {
    expect(digestOf(doc({ resources: { sizeClass: 'medium', accelerator: 'none' } }))).toBe(
      digestOf(doc({ resources: { sizeClass: 'medium' } })),
    );
    expect(digestOf(doc({ resources: { sizeClass: 'medium', accelerator: null } }))).toBe(
      digestOf(doc({ resources: { sizeClass: 'medium' } })),
    );
    expect(digestOf({ name: 'x', sizeClass: 'medium', accelerator: 'none' })).toBe(digestOf({ name: 'x', sizeClass: 'medium' }));
    const variants = (v: Record<string, unknown>) => digestOf(doc({ resources: { sizeClass: 'small' }, compatibility: { variants: v } }));
    expect(variants({ required: ['e2b'], optional: [] })).toBe(variants({ required: ['e2b'] }));
    expect(variants({ required: [], optional: ['e2b'] })).toBe(variants({ optional: ['e2b'] }));
  });

  it('changes with any change of a value in spec', () => {
    const base = digestOf(doc(GPU_SPEC));
    const paths = leafPaths(GPU_SPEC);
    expect(paths.length).toBeGreaterThan(10);
    const seen = new Set([base]);
    for (const path of paths) {
      const changed = structuredClone(GPU_SPEC) as Record<string, unknown>;
      setAt(changed, path, changedValue(getAt(changed, path)));
      const digest = digestOf(doc(changed));
      expect(digest, path.join('.')).not.toBe(base);
      seen.add(digest);
    }
    expect(seen.size).toBe(paths.length + 1);
    fc.assert(
      fc.property(fc.constantFrom(...paths), fc.jsonValue(), (path, value) => {
        const leaf = getAt(GPU_SPEC, path);
        fc.pre(
          JSON.stringify(value) !== JSON.stringify(leaf) && !(path[0] === 'resources' || path[0] === 'base' || path[0] === 'compatibility'),
        );
        const changed = structuredClone(GPU_SPEC) as Record<string, unknown>;
        setAt(changed, path, value);
        expect(digestOf(doc(changed))).not.toBe(base);
      }),
    );
  });
});

type Path = (string | number)[];

function leafPaths(value: unknown, at: Path = []): Path[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => leafPaths(v, [...at, i]));
  if (value !== null && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => leafPaths(v, [...at, k]));
  return [at];
}

function getAt(value: unknown, path: Path): unknown {
  return path.reduce<unknown>((v, k) => (v as Record<string | number, unknown>)[k], value);
}

function setAt(value: unknown, path: Path, leaf: unknown): void {
  const parent = getAt(value, path.slice(0, -1)) as Record<string | number, unknown>;
  parent[path.at(-1)!] = leaf;
}

/** Another value the validation still accepts at the same place. */
function changedValue(leaf: unknown): unknown {
  if (typeof leaf === 'number') return leaf === 1 ? 2 : leaf - 1;
  const alternatives: Record<string, string> = {
    'gpu-small': 'gpu-large',
    T4: 'H100',
    '12.8': '12.9',
    modal: 'e2b',
    daytona: 'datalayer',
    'datalayer/python-cuda:2026.09': 'datalayer/python-cuda:2026.10',
  };
  return alternatives[leaf as string] ?? `${String(leaf)}-changed`;
}

/** The same value with every object's keys in a pseudo-random order. */
function shuffleKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, seed));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value);
  const order = entries.map((e, i) => ({ e, k: (Math.imul(seed + 1, 2654435761) ^ Math.imul(i + 7, 40503)) >>> 0 }));
  order.sort((a, b) => a.k - b.k);
  return Object.fromEntries(order.map(({ e: [k, v] }) => [k, shuffleKeys(v, seed + 1)]));
}
