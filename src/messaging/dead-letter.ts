import { z } from 'zod';
import { sha256Hex } from 'src/common/canonical-json';
import type { Finding } from 'src/common/errors/billing.exception';
import { MessageTooLarge, type InboundMessage, type MessageBus, type OutboundMessage } from 'src/infra/kafka/message-bus';

/** The headers of a dead letter, whose key and value are the refused message's as received. */
export const deadLetterHeadersSchema = z
  .strictObject({
    'x-dlq-reason': z.string().meta({ description: 'Why it was refused, in words' }),
    'x-dlq-code': z
      .enum(['DL_BILLING_REQUEST_INVALID', 'DL_BILLING_INTERNAL'])
      .meta({ description: 'REQUEST_INVALID: the message is malformed; INTERNAL: a valid-looking message the database refused' }),
    'x-dlq-findings': z.string().meta({ description: 'JSON: the findings, `[{field, message}]`' }),
    'x-dlq-source': z.string().meta({ description: '`topic/partition/offset` of the refused message' }),
    'x-dlq-truncated': z
      .string()
      .optional()
      .meta({ description: 'Only on a value too large to park whole: its length in bytes as received (the value kept is its start)' }),
    'x-dlq-value-sha256': z
      .string()
      .optional()
      .meta({ description: 'With x-dlq-truncated: the SHA-256 (hex) of the whole value as received' }),
  })
  .meta({ id: 'DeadLetterHeaders' });
export type DeadLetterHeaders = z.input<typeof deadLetterHeadersSchema>;

/**
 * The most of a refused value a dead letter carries: the broker refuses a message over its
 * `message.max.bytes` (1 MiB by default), headers included, and a value the broker took compressed
 * may be larger than that once read. A longer value is parked truncated, with its length and digest.
 */
export const DEAD_LETTER_VALUE_BYTES = 960 * 1024;
/** What one send to a dead-letter topic may carry, a single larger message going alone. */
const SEND_BYTES = 256 * 1024;

/** The dead letter of a refused message: its key and value byte for byte as received, the reason in headers. */
export function deadLetter(
  topic: string,
  message: InboundMessage,
  reason: string,
  code: DeadLetterHeaders['x-dlq-code'],
  findings: Finding[],
): OutboundMessage {
  const headers: DeadLetterHeaders = {
    'x-dlq-reason': clip(reason, 4096),
    'x-dlq-code': code,
    'x-dlq-findings': boundedFindings(findings),
    'x-dlq-source': `${message.topic}/${message.partition}/${message.offset}`,
  };
  const letter: OutboundMessage = { topic, key: message.key, value: message.value, headers };
  return message.value && message.value.length > DEAD_LETTER_VALUE_BYTES ? truncated(letter, DEAD_LETTER_VALUE_BYTES) : letter;
}

/**
 * Publishes dead letters in sends the broker takes: in parts of at most 256 KiB (a larger letter
 * alone), and a letter the broker still refuses as too large (a broker with a lower limit) parked
 * with its headers only. A refused message is never what stops consumption.
 */
export async function publishDeadLetters(bus: MessageBus, letters: OutboundMessage[]): Promise<void> {
  for (let from = 0; from < letters.length;) {
    let bytes = 0;
    let to = from;
    while (to < letters.length && (to === from || bytes + sizeOf(letters[to]!) <= SEND_BYTES)) bytes += sizeOf(letters[to++]!);
    const part = letters.slice(from, to);
    try {
      await bus.publish(part);
    } catch (error) {
      if (!(error instanceof MessageTooLarge)) throw error;
      for (const letter of part) await publishOrTruncate(bus, letter);
    }
    from = to;
  }
}

async function publishOrTruncate(bus: MessageBus, letter: OutboundMessage): Promise<void> {
  try {
    await bus.publish([letter]);
  } catch (error) {
    if (!(error instanceof MessageTooLarge)) throw error;
    await bus.publish([truncated(letter, 0)]);
  }
}

/** The letter with only the first `bytes` of its value, saying how long the whole was and its digest. */
function truncated(letter: OutboundMessage, bytes: number): OutboundMessage {
  const value = typeof letter.value === 'string' ? Buffer.from(letter.value) : (letter.value ?? Buffer.alloc(0));
  if (letter.headers?.['x-dlq-truncated']) return { ...letter, value: value.subarray(0, bytes) };
  const headers = { ...letter.headers, 'x-dlq-truncated': String(value.length), 'x-dlq-value-sha256': sha256Hex(value) };
  return { ...letter, value: value.subarray(0, bytes), headers };
}

function sizeOf(letter: OutboundMessage): number {
  const headers = Object.entries(letter.headers ?? {}).reduce((n, [k, v]) => n + k.length + v.length, 0);
  return (letter.value?.length ?? 0) + (letter.key?.length ?? 0) + headers + 64;
}

/** A header's text at most `chars` long (a hostile message's findings may quote thousands of fields). */
function clip(text: string, chars: number): string {
  return text.length <= chars ? text : `${text.slice(0, chars)}…`;
}

/** The findings as JSON: the first 50, each field and message clipped, so that headers stay small. */
function boundedFindings(findings: Finding[]): string {
  return JSON.stringify(findings.slice(0, 50).map((f) => ({ field: clip(f.field, 256), message: clip(f.message, 512) })));
}
