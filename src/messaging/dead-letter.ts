import { z } from 'zod';
import type { Finding } from 'src/common/errors/billing.exception';
import type { InboundMessage, OutboundMessage } from 'src/infra/kafka/message-bus';

/** The headers of a dead letter, whose key and value are the refused message's as received. */
export const deadLetterHeadersSchema = z
  .strictObject({
    'x-dlq-reason': z.string().meta({ description: 'Why it was refused, in words' }),
    'x-dlq-code': z
      .enum(['DL_BILLING_REQUEST_INVALID', 'DL_BILLING_INTERNAL'])
      .meta({ description: 'REQUEST_INVALID: the message is malformed; INTERNAL: a valid-looking message the database refused' }),
    'x-dlq-findings': z.string().meta({ description: 'JSON: the findings, `[{field, message}]`' }),
    'x-dlq-source': z.string().meta({ description: '`topic/partition/offset` of the refused message' }),
  })
  .meta({ id: 'DeadLetterHeaders' });
export type DeadLetterHeaders = z.input<typeof deadLetterHeadersSchema>;

/** The dead letter of a refused message: its key and value as received, the reason in headers. */
export function deadLetter(
  topic: string,
  message: InboundMessage,
  reason: string,
  code: DeadLetterHeaders['x-dlq-code'],
  findings: Finding[],
): OutboundMessage {
  const headers: DeadLetterHeaders = {
    'x-dlq-reason': reason,
    'x-dlq-code': code,
    'x-dlq-findings': JSON.stringify(findings),
    'x-dlq-source': `${message.topic}/${message.partition}/${message.offset}`,
  };
  return { topic, key: message.key ?? '', value: message.value?.toString('utf8') ?? '', headers };
}
