import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { CompressionTypes } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/common/errors/error-codes';
import { fundedAccount, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { nestedArrays, nestedObjects } from '../support/hostile';
import { eventually, produce, readTopic } from '../support/kafka';

const FUZZ_MESSAGES = 300;
const CODES = new Set(Object.keys(ERROR_STATUS));

/** A Kafka message value that is almost a lifecycle event: fields dropped, retyped or replaced by junk; or not an event at all. */
function malformed(accountId: string) {
  const junk = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    fc.string(),
    fc.constant(''),
    fc.constant('9999-01-01T00:00:00.000Z'),
    fc.constant('2026-02-30T25:61:00Z'),
    fc.constant(-1),
    fc.constant(1e308),
    fc.constant('runtime.exploded'),
    fc.array(fc.anything(), { maxLength: 3 }),
    fc.dictionary(fc.string(), fc.anything(), { maxKeys: 3 }),
  );
  const fields = ['id', 'type', 'occurredAt', 'accountId', 'runtimeId', 'seq', 'data', 'extra'];
  const mutatedEvent = fc
    .tuple(
      fc.constantFrom(
        'runtime.started',
        'runtime.heartbeat',
        'runtime.paused',
        'runtime.resumed',
        'runtime.terminated',
        'runtime.launch_failed',
      ),
      fc.array(fc.tuple(fc.constantFrom(...fields), fc.option(junk, { nil: undefined })), { minLength: 1, maxLength: 3 }),
      fc.nat(1000),
    )
    .map(([type, edits, n]) => {
      const event: Record<string, unknown> = {
        id: `evt_fuzz_${n}_${Math.random().toString(36).slice(2)}`,
        type,
        occurredAt: new Date(Date.now() - 60_000).toISOString(),
        accountId,
        runtimeId: `rt_fuzz_${n}`,
        seq: n,
        data: {},
      };
      for (const [field, value] of edits) {
        if (value === undefined) delete event[field];
        else event[field] = value;
      }
      return JSON.stringify(event);
    });
  const notAnEvent = fc.oneof(
    fc.string({ minLength: 1 }),
    fc.json(),
    fc.constant('{"id": "evt_truncated", "type": "runtime.heartbeat", "occurredAt": "2026-'),
    fc.constant('{"id": "evt_nul\\u0000", "type": "runtime.heartbeat"}'),
  );
  return fc.oneof({ weight: 3, arbitrary: mutatedEvent }, { weight: 1, arbitrary: notAnEvent });
}

/**
 * Messages an attacker could publish, each with the reason it must be parked for. Inputs that once
 * broke the consumer are kept here as regression cases.
 */
function hostile(accountId: string): { value: string; reason: RegExp }[] {
  const event = (extra: string) =>
    `{"id":"${uid('evt_hostile')}","type":"runtime.heartbeat","occurredAt":"${new Date(Date.now() - 60_000).toISOString()}","accountId":"${accountId}","runtimeId":"rt_hostile","seq":1,"data":{}${extra}}`;
  const deep = /must not be nested more than 32 levels deep/;
  return [
    { value: nestedArrays(5_000), reason: deep },
    { value: nestedObjects(5_000), reason: deep },
    { value: nestedArrays(100_000), reason: deep },
    { value: nestedObjects(100_000), reason: deep },
    { value: event(`,"extra":${nestedObjects(5_000)}`), reason: deep },
    { value: event(',"seq":2'), reason: /must not have the key "seq" twice/ },
    { value: event(',"\\u0064ata":{"x":1}'), reason: /must not have the key "data" twice/ },
    { value: event(',"__proto__":{"accountId":"acc_other"}'), reason: /__proto__/ },
    { value: event(',"constructor":{"prototype":{"admin":true}}'), reason: /invalid event/ },
    { value: event('').replace('"data":{}', '"data":{"note":"a\\u0000b"}'), reason: /NUL/ },
    { value: event('').replace('"seq":1', `"seq":${'9'.repeat(400)}`), reason: /seq/ },
    { value: event('').replace('"runtimeId":"rt_hostile"', `"runtimeId":"${'\u202E'.repeat(3)}rt"`), reason: /runtimeId/ },
    { value: event('').replace('"data":{}', '"data":{"note":"a\\ud800"}'), reason: /lone UTF-16 surrogate/ },
  ];
}

describe('fuzzing the lifecycle consumer on the real broker', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startApp({ kafka: true });
  });
  afterAll(() => h.close());

  /** A runtime reserved for an hour on a new account with 10 credits. */
  const reservedRuntime = async () => {
    const accountId = await fundedAccount(h, await h.key('admin'), { credits: '10.000000' });
    const runtimeId = uid('rt');
    const reserved = await h.request('POST', '/v1/reservations', {
      key: await h.key('control-plane'),
      body: { accountId, runtimeId, ...SMALL, minutes: 60 },
    });
    expect(reserved.status).toBe(201);
    return { accountId, runtimeId };
  };

  it('parks every malformed message with a contract code and its reason, applies every good event mixed in, and keeps consuming', async () => {
    const admin = await h.key('admin');
    const cp = await h.key('control-plane');
    const accountId = await fundedAccount(h, admin, { credits: '100.000000' });
    const runtimes = Array.from({ length: 5 }, () => uid('rt'));
    for (const runtimeId of runtimes) {
      const reserved = await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes: 60 } });
      expect(reserved.status).toBe(201);
    }
    const start = Date.now() - 30 * 60_000;
    const good = runtimes.flatMap((runtimeId) =>
      Array.from({ length: 20 }, (_, i) => ({
        id: uid('evt_good'),
        type: i === 0 ? 'runtime.started' : 'runtime.heartbeat',
        occurredAt: new Date(start + i * 60_000).toISOString(),
        accountId,
        runtimeId,
        seq: i + 1,
        data: {},
      })),
    );
    const attacks = hostile(accountId);
    const fuzz = [...fc.sample(malformed(accountId), { numRuns: FUZZ_MESSAGES, seed: 20261202 }), ...attacks.map((a) => a.value)];
    // Good and bad interleaved, all on the account's key (one partition, in this order).
    const messages: { key: string; value: string }[] = [];
    for (let i = 0, g = 0; i < fuzz.length || g < good.length; i++) {
      if (i < fuzz.length) messages.push({ key: accountId, value: fuzz[i]! });
      for (let k = 0; k < 2 && g < good.length; k++, g++) messages.push({ key: accountId, value: JSON.stringify(good[g]) });
    }
    const sentinel = {
      id: uid('evt_last'),
      type: 'runtime.heartbeat',
      occurredAt: new Date().toISOString(),
      accountId,
      runtimeId: runtimes[0]!,
      seq: 100,
      data: {},
    };
    messages.push({ key: accountId, value: JSON.stringify(sentinel) });
    await produce(h.config.topics.lifecycle, messages);

    const appliedIds = async (ids: string[]): Promise<Set<string>> =>
      new Set(((await h.ds.query(`SELECT id FROM runtime_events WHERE id = ANY($1)`, [ids])) as { id: string }[]).map((r) => r.id));
    const counted = async (): Promise<Map<string, number>> =>
      new Map(
        (
          (await h.ds.query(`SELECT runtime_id, events_count FROM runtimes WHERE runtime_id = ANY($1)`, [runtimes])) as {
            runtime_id: string;
            events_count: number;
          }[]
        ).map((c) => [c.runtime_id, c.events_count]),
      );
    // The last event is a heartbeat: counted by its runtime, not stored.
    await eventually(async () => (await counted()).get(runtimes[0]!) === 21, 60_000, 'the last event');

    // Every good event was applied: the starts are stored, and each runtime counts its 20 (plus the last one on the first).
    const starts = good.filter((e) => e.type === 'runtime.started');
    expect((await appliedIds(starts.map((e) => e.id))).size).toBe(starts.length);
    expect(await counted()).toEqual(new Map(runtimes.map((r, i) => [r, i === 0 ? 21 : 20])));

    // Every fuzz message is either an event the service accepted (still valid after the mutation) or parked, never lost.
    const idOf = (value: string): string | null => {
      try {
        const id = (JSON.parse(value) as { id?: unknown }).id;
        return typeof id === 'string' ? id : null;
      } catch {
        return null;
      }
    };
    // (An id with a NUL cannot be stored, so it cannot have been accepted: PostgreSQL text refuses it.)
    // A heartbeat is not stored: one that was not parked must have been counted by its runtime.
    const accepted = await appliedIds(fuzz.map(idOf).filter((id): id is string => id !== null && !id.includes('\u0000')));
    const heartbeatOf = (value: string): { runtimeId: unknown; seq: unknown } | null => {
      try {
        const e = JSON.parse(value) as { type?: unknown; runtimeId?: unknown; seq?: unknown } | null;
        return e?.type === 'runtime.heartbeat' ? { runtimeId: e.runtimeId, seq: e.seq } : null;
      } catch {
        return null;
      }
    };
    const mustPark = fuzz.filter((v) => !heartbeatOf(v) && !accepted.has(idOf(v) ?? ''));
    expect(mustPark.length).toBeGreaterThan(FUZZ_MESSAGES * 0.5);
    const parked = await readTopic(h.config.topics.lifecycleDlq, mustPark.length, 60_000, 2_000);
    const parkedValues = parked.map((m) => m.value);
    for (const value of mustPark) expect(parkedValues).toContain(Buffer.from(value).toString('utf8'));
    const heartbeats = fuzz.filter((v) => heartbeatOf(v));
    for (const value of heartbeats.filter((v) => !parkedValues.includes(Buffer.from(v).toString('utf8')))) {
      const hb = heartbeatOf(value)!;
      const [row] = (await h.ds.query(`SELECT heartbeat_seq::int AS top FROM runtimes WHERE runtime_id = $1`, [String(hb.runtimeId)])) as {
        top: number | null;
      }[];
      expect(row?.top, value.slice(0, 120)).toBeGreaterThanOrEqual(Number(hb.seq));
    }
    // Nothing was parked that was applied, nor anything that was not sent.
    expect(parked).toHaveLength(
      fuzz.filter((v) => !accepted.has(idOf(v) ?? '')).length -
        heartbeats.filter((v) => !parkedValues.includes(Buffer.from(v).toString('utf8'))).length,
    );
    for (const m of parked) {
      expect(CODES.has(m.headers['x-dlq-code'] ?? '')).toBe(true);
      expect(m.headers['x-dlq-reason']?.length).toBeGreaterThan(0);
    }
    expect(parkedValues.some((v) => v.includes('evt_good'))).toBe(false);
    // Each hostile message is parked for its own reason, found without recursing over it.
    for (const attack of attacks) {
      const found = parked.find((m) => m.value === attack.value);
      expect(found?.headers['x-dlq-code'], attack.value.slice(0, 80)).toBe('DL_BILLING_REQUEST_INVALID');
      expect(found?.headers['x-dlq-reason'], attack.value.slice(0, 80)).toMatch(attack.reason);
    }

    // Still consuming after the storm, and still healthy.
    const after = { ...sentinel, id: uid('evt_after'), seq: 101, occurredAt: new Date().toISOString() };
    await produce(h.config.topics.lifecycle, [{ key: accountId, value: after }]);
    await eventually(async () => (await counted()).get(runtimes[0]!) === 22, 30_000, 'an event after the fuzz');
    expect((await h.request('GET', '/health/ready')).status).toBe(200);
  });

  it('parks a message whose bytes are not UTF-8 (instead of reading U+FFFD into it), and applies the next one', async () => {
    const { accountId, runtimeId } = await reservedRuntime();
    const event = (id: string, type: string, seq: number, reason: string) =>
      `{"id":"${id}","type":"${type}","occurredAt":"${new Date(Date.now() - 60_000).toISOString()}","accountId":"${accountId}","runtimeId":"${runtimeId}","seq":${seq},"data":{${reason}}}`;
    const bad = uid('evt_latin1');
    const [head, tail] = event(bad, 'runtime.terminated', 1, '"reason":"user-XX"').split('XX');
    const good = uid('evt_good');
    await produce(h.config.topics.lifecycle, [
      { key: accountId, value: Buffer.concat([Buffer.from(head!), Buffer.from([0xe9, 0xff]), Buffer.from(tail!)]) },
      { key: accountId, value: event(good, 'runtime.started', 2, '') },
    ]);
    await eventually(
      async () => (await h.ds.query(`SELECT 1 FROM runtime_events WHERE id = $1`, [good])).length === 1,
      60_000,
      'the good event',
    );
    const parked = (await readTopic(h.config.topics.lifecycleDlq, 1_000, 5_000, 500)).find((m) => m.value.includes(bad));
    expect(parked?.headers['x-dlq-code']).toBe('DL_BILLING_REQUEST_INVALID');
    expect(parked?.headers['x-dlq-reason']).toBe('must be UTF-8 (bytes that are no UTF-8 character were found)');
    expect(await h.ds.query(`SELECT 1 FROM runtime_events WHERE id = $1`, [bad])).toEqual([]);
  });

  it('parks, byte for byte, what it refuses: a value the broker took compressed but too large to park whole truncated with its length and digest; other keys and values as received', async () => {
    const { accountId, runtimeId } = await reservedRuntime();
    const marker = uid('huge');
    // 3 MiB of an invalid event, gzip-compressed by the producer: the broker takes it, the service reads 3 MiB.
    const huge = Buffer.from(JSON.stringify({ id: marker, type: 'runtime.bogus', data: { pad: 'x'.repeat(3 * 1024 * 1024) } }));
    const notUtf8 = Buffer.from([0xff, 0xfe, 0x7b, ...Buffer.from(uid('raw'))]);
    const good = uid('evt_good');
    const started = {
      id: good,
      type: 'runtime.started',
      occurredAt: new Date(Date.now() - 60_000).toISOString(),
      accountId,
      runtimeId,
      seq: 1,
      data: {},
    };
    await produce(
      h.config.topics.lifecycle,
      [
        { key: accountId, value: huge },
        { key: Buffer.from([0x80, 0x81]), value: notUtf8 },
        { key: null, value: `not JSON ${marker}` },
        { key: marker, value: null },
        { key: accountId, value: started },
      ],
      CompressionTypes.GZIP,
    );
    await eventually(
      async () => (await h.ds.query(`SELECT 1 FROM runtime_events WHERE id = $1`, [good])).length === 1,
      60_000,
      'the good event',
    );
    const parked = await readTopic(h.config.topics.lifecycleDlq, 1_000, 5_000, 500);

    const truncated = parked.find((m) => m.value.includes(marker) && m.headers['x-dlq-truncated']);
    expect(truncated?.headers).toMatchObject({
      'x-dlq-code': 'DL_BILLING_REQUEST_INVALID',
      'x-dlq-truncated': String(huge.length),
      'x-dlq-value-sha256': createHash('sha256').update(huge).digest('hex'),
    });
    expect(truncated?.raw.value?.equals(huge.subarray(0, 960 * 1024))).toBe(true);
    const raw = parked.find((m) => m.raw.value?.equals(notUtf8));
    expect(raw?.raw.key?.equals(Buffer.from([0x80, 0x81]))).toBe(true);
    const keyless = parked.find((m) => m.value === `not JSON ${marker}`);
    expect(keyless?.raw.key).toBeNull();
    const valueless = parked.find((m) => m.raw.key?.toString() === marker);
    expect(valueless?.raw.value).toBeNull();
    expect((await h.request('GET', '/health/ready')).status).toBe(200);
  });
});
