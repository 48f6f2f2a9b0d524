import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MessageTooLarge, type InboundMessage, type MessageBus, type OutboundMessage } from 'src/infra/kafka/message-bus';
import { deadLetter, publishDeadLetters } from './dead-letter';

/** A broker that takes messages whose value is at most `limit` bytes, and refuses the whole send otherwise. */
function brokerWithLimit(limit: number) {
  const sends: OutboundMessage[][] = [];
  const bus = {
    publish: (messages: OutboundMessage[]) => {
      if (messages.some((m) => (m.value?.length ?? 0) > limit)) return Promise.reject(new MessageTooLarge(new Error('MESSAGE_TOO_LARGE')));
      sends.push(messages);
      return Promise.resolve();
    },
  } as unknown as MessageBus;
  return { bus, sends };
}

const refused = (offset: number, value: Buffer | null, key: Buffer | null = Buffer.from('acc_1')): InboundMessage => ({
  topic: 'runtime.lifecycle.v1',
  partition: 0,
  offset: String(offset),
  key,
  value,
});
const letterOf = (message: InboundMessage) =>
  deadLetter('runtime.lifecycle.v1.dlq', message, 'not JSON', 'DL_BILLING_REQUEST_INVALID', [{ field: 'value', message: 'must be JSON' }]);

describe('dead letters', () => {
  it('keep the key and value byte for byte, null as null', () => {
    const bytes = Buffer.from([0xff, 0xfe, 0x7b]);
    expect(letterOf(refused(1, bytes, Buffer.from([0x80])))).toMatchObject({ key: Buffer.from([0x80]), value: bytes });
    expect(letterOf(refused(2, null, null))).toMatchObject({ key: null, value: null });
    expect(letterOf(refused(3, bytes)).headers).toEqual({
      'x-dlq-reason': 'not JSON',
      'x-dlq-code': 'DL_BILLING_REQUEST_INVALID',
      'x-dlq-findings': '[{"field":"value","message":"must be JSON"}]',
      'x-dlq-source': 'runtime.lifecycle.v1/0/3',
    });
  });

  it('park a value over 960 KiB truncated, with its length and digest', () => {
    const huge = Buffer.alloc(3 * 1024 * 1024, 0x61);
    const letter = letterOf(refused(4, huge));
    expect(Buffer.isBuffer(letter.value) && letter.value.equals(huge.subarray(0, 960 * 1024))).toBe(true);
    expect(letter.headers).toMatchObject({
      'x-dlq-truncated': String(huge.length),
      'x-dlq-value-sha256': createHash('sha256').update(huge).digest('hex'),
    });
  });

  it('go in sends of at most 256 KiB, and one the broker still refuses is parked with its headers only, the others whole', async () => {
    const { bus, sends } = brokerWithLimit(300 * 1024);
    const values = [100, 100, 100, 400, 10].map((kib, i) => Buffer.alloc(kib * 1024, 0x30 + i));
    await publishDeadLetters(
      bus,
      values.map((v, i) => letterOf(refused(i, v))),
    );
    expect(sends.map((send) => send.map((m) => m.headers!['x-dlq-source']))).toEqual([
      ['runtime.lifecycle.v1/0/0', 'runtime.lifecycle.v1/0/1'],
      ['runtime.lifecycle.v1/0/2'],
      ['runtime.lifecycle.v1/0/3'],
      ['runtime.lifecycle.v1/0/4'],
    ]);
    const parked = sends.flat();
    expect(parked.map((m) => m.value?.length)).toEqual([100 * 1024, 100 * 1024, 100 * 1024, 0, 10 * 1024]);
    expect(parked[3]!.headers).toMatchObject({
      'x-dlq-truncated': String(400 * 1024),
      'x-dlq-value-sha256': createHash('sha256').update(values[3]!).digest('hex'),
    });
  });

  it('let any other failure of the broker through (the batch is retried, not parked short)', async () => {
    const bus = { publish: () => Promise.reject(new Error('broker away')) } as unknown as MessageBus;
    await expect(publishDeadLetters(bus, [letterOf(refused(1, Buffer.from('x')))])).rejects.toThrow('broker away');
  });
});
