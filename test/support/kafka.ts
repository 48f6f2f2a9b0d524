import { CompressionTypes, Kafka, logLevel, Partitioners, type IHeaders } from 'kafkajs';
import { inject } from 'vitest';
import type { KafkajsBusConfig } from '../../src/infra/kafka/kafkajs-bus';

export interface ReadMessage {
  key: string | null;
  value: string;
  /** Key and value as the broker holds them, byte for byte. */
  raw: { key: Buffer | null; value: Buffer | null };
  headers: Record<string, string>;
  partition: number;
  offset: string;
}

export function kafka(): Kafka {
  return new Kafka({ clientId: 'billing-tests', brokers: inject('kafkaBrokers').split(','), logLevel: logLevel.NOTHING });
}

/**
 * The configuration of a bus of its own (KafkajsBus built directly in a test): every topic and the
 * group named after `tag`, on the test broker unless `brokers` says otherwise.
 */
export function busConfig(tag: string, topic: string, brokers = inject('kafkaBrokers').split(',')): KafkajsBusConfig {
  return {
    brokers,
    clientId: tag,
    groupId: `group-${tag}`,
    sessionTimeoutMs: 6_000,
    topics: {
      lifecycle: topic,
      lifecycleDlq: `${topic}.dlq`,
      membership: `${topic}.membership`,
      membershipDlq: `${topic}.membership.dlq`,
      commands: `${topic}.commands`,
      notifications: `${topic}.notifications`,
      ancillary: `${topic}.ancillary`,
      ancillaryDlq: `${topic}.ancillary.dlq`,
    },
  };
}

/** Produces messages (values already serialised, or objects turned into JSON). */
export async function produce(
  topic: string,
  messages: { key?: string | Buffer | null; value: string | Buffer | object | null }[],
  compression = CompressionTypes.None,
): Promise<void> {
  const producer = kafka().producer({ allowAutoTopicCreation: true, createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  try {
    await producer.send({
      topic,
      acks: -1,
      compression,
      messages: messages.map((m) => ({
        key: m.key ?? null,
        value: m.value === null ? null : typeof m.value === 'string' || Buffer.isBuffer(m.value) ? m.value : JSON.stringify(m.value),
      })),
    });
  } finally {
    await producer.disconnect();
  }
}

function headersOf(h: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h ?? {})) if (v !== undefined) out[k] = Array.isArray(v) ? String(v[0]) : String(v);
  return out;
}

/**
 * Reads a topic from the beginning until `count` messages have arrived (then waits `settleMs` more
 * to catch extras) or the timeout passes; returns what it read.
 */
export async function readTopic(topic: string, count: number, timeoutMs = 30_000, settleMs = 1_000): Promise<ReadMessage[]> {
  // A fetch that waits at the broker holds up the disconnect below (kafkajs' default: up to 5 s).
  const consumer = kafka().consumer({ groupId: `reader-${topic}-${Date.now()}-${Math.random()}`, maxWaitTimeInMs: 200 });
  const received: ReadMessage[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let reachedAt = 0;
    await consumer.run({
      eachMessage: async ({ message, partition }) => {
        received.push({
          key: message.key?.toString() ?? null,
          value: message.value?.toString() ?? '',
          raw: { key: message.key, value: message.value },
          headers: headersOf(message.headers),
          partition,
          offset: message.offset,
        });
        if (received.length >= count && reachedAt === 0) reachedAt = Date.now();
      },
    });
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (reachedAt > 0 && Date.now() - reachedAt >= settleMs) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await consumer.disconnect();
  }
  return received;
}

/** Polls `check` until it returns true or the timeout passes. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 30_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}
