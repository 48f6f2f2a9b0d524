import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageValidator } from 'src/common/http/zod-validation.pipe';
import { TERMINATE_REASONS } from 'src/messaging/commands';
import { lifecycleEventSchema, lifecycleValidator, parseLifecycleMessage, plainlyValid, TERMINATION_REASONS } from './lifecycle-event';

const now = () => new Date('2026-12-02T10:00:00.000Z');
const validate = lifecycleValidator(now);
const good = {
  id: 'evt_1',
  type: 'runtime.started',
  occurredAt: '2026-12-02T09:00:00.000Z',
  accountId: 'acc_1',
  runtimeId: 'rt_1',
  seq: 2,
  data: {},
};
const parse = (value: unknown) => parseLifecycleMessage(Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)), validate);

describe('parseLifecycleMessage', () => {
  it.each([...TERMINATION_REASONS, ...TERMINATE_REASONS, 'oom_killed_by_the_node'])(
    'accepts a termination for the reason %s, recorded as given',
    (reason) => {
      const r = parse({ ...good, type: 'runtime.terminated', data: { reason } });
      expect(r.ok && r.event.data.reason).toBe(reason);
    },
  );

  it("lists every reason of our own runtime.terminate commands among the contract's termination reasons", () => {
    expect(TERMINATION_REASONS).toEqual(expect.arrayContaining([...TERMINATE_REASONS]));
  });

  it('accepts a contract event', () => {
    const r = parse(good);
    expect(r.ok && r.event.occurredAt.toISOString()).toBe('2026-12-02T09:00:00.000Z');
  });

  it.each([
    ['not JSON', 'this is not JSON', /not JSON/],
    ['NUL characters', JSON.stringify({ ...good, id: 'evt\u0000' }), /NUL/],
    ['an unknown type', { ...good, type: 'runtime.exploded' }, /type/],
    ['a negative seq', { ...good, seq: -1 }, /seq: must not be negative/],
    ['a date in year 9999', { ...good, occurredAt: '9999-01-01T00:00:00.000Z' }, /occurredAt/],
    ['missing fields', { id: 'evt_2', type: 'runtime.started' }, /occurredAt.*accountId.*runtimeId.*seq/],
    [
      'a termination without its reason',
      { ...good, type: 'runtime.terminated', data: {} },
      /data\.reason: must be a string of 1-500 characters/,
    ],
    ['a termination with an empty reason', { ...good, type: 'runtime.terminated', data: { reason: '' } }, /data\.reason: must be a string/],
    [
      'a termination with a reason that is not a string',
      { ...good, type: 'runtime.terminated', data: { reason: 7 } },
      /data\.reason: must be a string/,
    ],
    [
      'a termination with a reason of 501 characters',
      { ...good, type: 'runtime.terminated', data: { reason: 'x'.repeat(501) } },
      /data\.reason: must be a string/,
    ],
    ['a failed launch without its reason', { ...good, type: 'runtime.launch_failed', data: {} }, /data\.reason: must be a string/],
    [
      'data nested 5,000 levels deep',
      JSON.stringify(good).replace('"data":{}', `"data":{"x":${'['.repeat(5000)}${']'.repeat(5000)}}`),
      /nested more than 32 levels/,
    ],
    ['a value 100,000 arrays deep', '['.repeat(100_000) + ']'.repeat(100_000), /nested more than 32 levels/],
    ['a key twice', JSON.stringify(good).replace('"seq":2', '"seq":2,"seq":3'), /key "seq" twice/],
    ['a __proto__ key', JSON.stringify(good).replace('"data":{}', '"data":{"__proto__":{"admin":true}}'), /__proto__/],
    ['more than 1 MiB', JSON.stringify({ ...good, data: { pad: 'x'.repeat(1024 * 1024) } }), /too large/],
  ])('refuses %s with a reason', (_what, value, reason) => {
    const r = parse(value);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.reason).toMatch(reason);
      expect(r.findings.length).toBeGreaterThan(0);
    }
  });
});

describe('lifecycleValidator', () => {
  // The schema alone: what the validator's direct check of the common case must agree with.
  const bySchema = messageValidator(lifecycleEventSchema(now), (e) => ({ ...e, occurredAt: new Date(e.occurredAt) }));
  const pick = <T>(...values: T[]) => fc.constantFrom(...values);
  /** Mostly values the schema takes, the rest at its edges or beyond them. */
  const mostly = <T, U>(taken: T[], edges: U[]) =>
    fc.oneof({ arbitrary: pick(...taken), weight: 5 }, { arbitrary: pick<T | U>(...taken, ...edges), weight: 1 });
  const field = {
    id: mostly(['evt_1', 'x'.repeat(200), 'ünïcödé id'], ['', 'x'.repeat(201), 7, null]),
    type: mostly(
      ['runtime.started', 'runtime.heartbeat', 'runtime.paused', 'runtime.resumed', 'runtime.terminated', 'runtime.launch_failed'],
      ['runtime.exploded', 3],
    ),
    occurredAt: mostly(
      [
        '2026-12-02T09:00:00.000Z',
        '2026-12-02T09:00:00Z',
        '2026-12-02T09:00:00.123456789Z',
        '2026-12-02T11:00:00+02:00',
        '2026-12-02T09:00:00-00:00',
        '2024-02-29T00:00:00Z',
        '2000-01-01T00:00:00Z',
        '2026-12-03T10:00:00.000Z',
      ],
      [
        '2026-12-02T09:00:00.1234567890Z',
        '2026-12-02T09:00:00+2400',
        '2026-12-02T09:00:00+24:00',
        '2026-12-02T09:00:00+05:60',
        '2026-12-02T09:00Z',
        '2026-12-02 09:00:00Z',
        '2026-12-02T09:00:00',
        '2026-02-29T00:00:00Z',
        '2026-04-31T00:00:00Z',
        '2026-13-01T00:00:00Z',
        '2026-12-02T24:00:00Z',
        '2026-12-02T23:60:00Z',
        '2026-12-02T23:59:60Z',
        '1999-12-31T23:59:59Z',
        '2026-12-03T10:00:00.001Z',
        '+002026-12-02T09:00:00Z',
        '2026-12-02',
        1796202000000,
      ],
    ),
    accountId: mostly(['acc_1', 'a', 'x'.repeat(128), 'acc.1:2-3_4'], ['x'.repeat(129), 'acc 1', '-acc', '']),
    runtimeId: mostly(['rt_1', 'rt.2'], ['', 'rt/1', 'x'.repeat(129)]),
    seq: mostly([0, 2, Number.MAX_SAFE_INTEGER, -0], [-1, 1.5, Number.MAX_SAFE_INTEGER + 1, '2', 1e21]),
    data: mostly(
      [{}, { reason: 'user' }, { reason: 'x'.repeat(500) }, { extra: [1, { a: 2 }] }],
      [{ reason: '' }, { reason: 7 }, { reason: 'x'.repeat(501) }, [], null, 'data'],
    ),
  };
  const event = fc.record(field);
  const sometimes = <T>(values: T[]) =>
    fc.oneof({ arbitrary: fc.constant(undefined), weight: 6 }, { arbitrary: pick(...values), weight: 1 });
  const extraKey = sometimes(['ID', 'extra', 'data2']);
  const missing = sometimes(Object.keys(field) as (keyof typeof field)[]);

  it('decides every event as the schema does, with the same event or the same findings', () => {
    let accepted = 0;
    fc.assert(
      fc.property(event, extraKey, missing, (e, extra, left) => {
        const value: Record<string, unknown> = extra === undefined ? { ...e } : { ...e, [extra]: 1 };
        if (left !== undefined) delete value[left];
        const decided = validate(value);
        expect(decided).toEqual(bySchema(value));
        if (decided.ok) accepted++;
      }),
      { numRuns: 8_000 },
    );
    // Both sides were exercised: accepted events (the direct check) and refused ones.
    expect(accepted).toBeGreaterThan(500);
  });

  it('refuses what is not an object as the schema does', () => {
    for (const value of [null, [], 'runtime.started', 7, true]) expect(validate(value)).toEqual(bySchema(value));
  });
});

describe('plainlyValid (the direct check of the common case)', () => {
  const schema = lifecycleEventSchema(now);
  const variants: unknown[] = [
    good,
    { ...good, data: undefined },
    (({ data: _, ...rest }) => rest)(good),
    { ...good, type: 'runtime.terminated', data: { reason: 'user', extra: { a: [1] } } },
    { ...good, type: 'runtime.terminated', data: { reason: '' } },
    { ...good, type: 'runtime.terminated', data: { reason: 'x'.repeat(501) } },
    { ...good, type: 'runtime.launch_failed', data: {} },
    { ...good, type: 'runtime.heartbeat', occurredAt: '2026-12-02T09:00:00+02:00' },
    { ...good, occurredAt: '2026-12-02T09:00:00' },
    { ...good, occurredAt: '2026-02-30T09:00:00Z' },
    { ...good, occurredAt: '2026-12-02T24:00:00Z' },
    { ...good, occurredAt: '1999-12-31T23:59:59Z' },
    { ...good, occurredAt: '2026-12-04T10:00:00.001Z' },
    { ...good, occurredAt: '2026-12-03T10:00:00.000Z' },
    { ...good, occurredAt: 1764666000000 },
    { ...good, id: '' },
    { ...good, id: 'x'.repeat(200) },
    { ...good, id: 'x'.repeat(201) },
    { ...good, accountId: 'acc 1' },
    { ...good, runtimeId: '_rt' },
    { ...good, runtimeId: 'r'.repeat(129) },
    { ...good, seq: 1.5 },
    { ...good, seq: -1 },
    { ...good, seq: 2 ** 53 },
    { ...good, seq: '2' },
    { ...good, type: 'runtime.exploded' },
    { ...good, extra: 1 },
    { ...good, data: [] },
    { ...good, data: null },
    JSON.parse(
      '{"id":"e","type":"runtime.started","occurredAt":"2026-12-02T09:00:00Z","accountId":"a","runtimeId":"r","seq":0,"data":{"__proto__":{"x":1}}}',
    ),
    JSON.parse(
      '{"__proto__":{},"id":"e","type":"runtime.started","occurredAt":"2026-12-02T09:00:00Z","accountId":"a","runtimeId":"r","seq":0}',
    ),
    null,
    [],
    'text',
  ];

  it.each(variants.map((v, i) => [i, v]))('variant %i: accepts only what the schema accepts, and gives the same event', (_i, value) => {
    const direct = plainlyValid(value, now);
    const parsed = schema.safeParse(value);
    if (direct) {
      expect(parsed.success).toBe(true);
      expect(direct).toEqual({ ...parsed.data, occurredAt: new Date(parsed.data!.occurredAt) });
    }
    // Either way, the validator answers as the schema does.
    expect(validate(value).ok).toBe(parsed.success);
  });

  it('takes the common events directly', () => {
    expect(plainlyValid(good, now)).not.toBeNull();
    expect(plainlyValid({ ...good, type: 'runtime.terminated', data: { reason: 'user' } }, now)).not.toBeNull();
  });
});
