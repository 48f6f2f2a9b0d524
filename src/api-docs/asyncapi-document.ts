import { z } from 'zod';
import { ancillaryEventSchema } from 'src/ancillary/ancillary-event';
import { snapshotFlagCommandSchema } from 'src/ancillary/unpaid-storage';
import { membershipEventSchema } from 'src/members/membership-consumer';
import { terminateCommandSchema } from 'src/messaging/commands';
import { lifecycleEventDocSchema } from 'src/metering/dto/event.dto';
import { deadLetterHeadersSchema } from 'src/messaging/dead-letter';
import { notificationMessage } from 'src/messaging/notifications';
import { topicsOf } from 'src/messaging/topics';
import { NOTIFICATION_EXAMPLES, notificationMessageSchema, type NotificationType } from './notification-schema';

/**
 * The AsyncAPI 3.0 document of the Kafka topics (served at /asyncapi.json, checked in as
 * docs/asyncapi.json by `npm run openapi`), made from the zod schemas the consumers validate with
 * and the publishers build their messages by: one source of truth, as for the OpenAPI document.
 * Topic names are the contract's defaults (each can be renamed with a `KAFKA_TOPIC_*` variable).
 */

type Topic = keyof ReturnType<typeof topicsOf>;

interface Channel {
  topic: Topic;
  /** The service receives (consumes) or sends (publishes) on it. */
  action: 'receive' | 'send';
  message: string;
  title: string;
  summary: string;
  key: string;
  payload?: z.ZodType;
  headers?: z.ZodType;
  /** Messages of other channels this topic accepts too (by their message name). */
  alsoAccepts?: string[];
  examples?: { name: string; summary: string; payload: unknown }[];
}

/** One example message of each notification type, as the service writes it. */
function notificationExamples(): Channel['examples'] {
  return (Object.entries(NOTIFICATION_EXAMPLES) as [NotificationType, Record<string, unknown>][]).map(([type, data]) => ({
    name: type,
    summary: `A \`${type}\` notification`,
    payload: notificationMessage(
      'billing.notifications.v1',
      { type, accountId: 'acc_4b7e', cause: `${type}:example`, data },
      new Date('2026-12-04T09:30:00.000Z'),
    ).payload,
  }));
}

const CHANNELS: Channel[] = [
  {
    topic: 'lifecycle',
    action: 'receive',
    message: 'LifecycleEvent',
    title: 'Runtime lifecycle event',
    summary:
      'What the control plane reports of a runtime (also accepted by POST /v1/events). Delivery is at least once, in any order; a runtime is charged from the set of its events.',
    key: 'accountId',
    payload: lifecycleEventDocSchema,
    alsoAccepts: ['AncillaryEvent'],
  },
  {
    topic: 'lifecycleDlq',
    action: 'send',
    message: 'LifecycleDeadLetter',
    title: 'A lifecycle message that could not be parsed or validated',
    summary: 'Key and value exactly as received (any bytes: not necessarily JSON); the reason in the headers. Consumption goes on.',
    key: 'the refused message key',
    headers: deadLetterHeadersSchema,
  },
  {
    topic: 'membershipDlq',
    action: 'send',
    message: 'MembershipDeadLetter',
    title: 'A membership message that could not be parsed or validated',
    summary: 'Key and value exactly as received (any bytes: not necessarily JSON); the reason in the headers. Consumption goes on.',
    key: 'the refused message key',
    headers: deadLetterHeadersSchema,
  },
  {
    topic: 'membership',
    action: 'receive',
    message: 'MembershipEvent',
    title: 'Organization membership change',
    summary: 'A member added or removed (seats = active members); the same as PUT/DELETE /v1/accounts/{id}/members/{userId}.',
    key: 'accountId',
    payload: membershipEventSchema(() => new Date()),
  },
  {
    topic: 'ancillary',
    action: 'receive',
    message: 'AncillaryEvent',
    title: 'Ancillary usage event',
    summary:
      'Snapshots, volumes and egress (also accepted on the lifecycle topic and by POST /v1/events): storage charged per hour of existence, egress per report; at least once, in any order. See docs/ancillary.md.',
    key: 'accountId',
    payload: ancillaryEventSchema(() => new Date()),
  },
  {
    topic: 'ancillaryDlq',
    action: 'send',
    message: 'AncillaryDeadLetter',
    title: 'An ancillary usage message that could not be parsed or validated',
    summary: 'Key and value exactly as received (any bytes: not necessarily JSON); the reason in the headers. Consumption goes on.',
    key: 'the refused message key',
    headers: deadLetterHeadersSchema,
  },
  {
    topic: 'commands',
    action: 'send',
    message: 'Command',
    title: 'Command to the platform',
    summary: 'Published through the transactional outbox: terminate a runtime, or flag an unpaid snapshot for deletion.',
    key: 'accountId',
    payload: z.union([terminateCommandSchema, snapshotFlagCommandSchema]),
  },
  {
    topic: 'notifications',
    action: 'send',
    message: 'Notification',
    title: 'Billing notification',
    summary:
      'Published through the transactional outbox, once per cause. The shape of `data` depends on `type` (one schema per type; an example of each).',
    key: 'accountId',
    payload: notificationMessageSchema,
    examples: notificationExamples(),
  },
];

/** A zod schema as the JSON Schema (draft 7) AsyncAPI's default schema format is a superset of, as a sender may write it. */
function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { target: 'draft-7', io: 'input', unrepresentable: 'any', reused: 'inline' }) as Record<
    string,
    unknown
  >;
  const definitions = (out.definitions ?? {}) as Record<string, Record<string, unknown>>;
  // A schema with an id comes back as a $ref to its definition: inline it (the document names it itself).
  const ref = typeof out.$ref === 'string' ? /^#\/definitions\/(.+)$/.exec(out.$ref)?.[1] : undefined;
  const body = ref && Object.keys(definitions).length === 1 ? { ...definitions[ref] } : { ...out };
  delete body.$schema;
  delete body.id;
  return body;
}

export function buildAsyncApiDocument(version = '1.0.0'): Record<string, unknown> {
  const topics = topicsOf({});
  const channels: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const messages: Record<string, unknown> = {};
  const schemas: Record<string, unknown> = {};
  for (const c of CHANNELS) {
    const name = c.topic;
    channels[name] = {
      address: topics[c.topic],
      title: c.title,
      description: `Kafka topic \`${topics[c.topic]}\`, keyed by ${c.key}.`,
      messages: Object.fromEntries([c.message, ...(c.alsoAccepts ?? [])].map((m) => [m, { $ref: `#/components/messages/${m}` }])),
    };
    operations[`${c.action}${c.message}`] = {
      action: c.action,
      channel: { $ref: `#/channels/${name}` },
      summary:
        c.action === 'receive' ? `The service consumes ${c.title.toLowerCase()}s` : `The service publishes: ${c.title.toLowerCase()}`,
      messages: [c.message, ...(c.alsoAccepts ?? [])].map((m) => ({ $ref: `#/channels/${name}/messages/${m}` })),
    };
    if (c.payload) schemas[c.message] = jsonSchema(c.payload);
    if (c.headers) schemas[`${c.message}Headers`] = jsonSchema(c.headers);
    messages[c.message] = {
      name: c.message,
      title: c.title,
      summary: c.summary,
      ...(c.payload ? { contentType: 'application/json', payload: { $ref: `#/components/schemas/${c.message}` } } : { payload: {} }),
      ...(c.headers ? { headers: { $ref: `#/components/schemas/${c.message}Headers` } } : {}),
      bindings: { kafka: { key: { type: 'string', description: c.key }, bindingVersion: '0.5.0' } },
      ...(c.examples ? { examples: c.examples } : {}),
    };
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Datalayer billing service: Kafka topics',
      version,
      description:
        'The topics the billing service consumes (runtime lifecycle events, membership changes) and publishes (commands, notifications, dead letters). JSON values, UTF-8; amounts of credits are decimal strings with 6 decimals. Topic names are the defaults; `KAFKA_TOPIC_*` variables rename them.',
    },
    defaultContentType: 'application/json',
    servers: {
      kafka: { host: 'localhost:9092', protocol: 'kafka', description: 'The brokers of `KAFKA_BROKERS`' },
    },
    channels,
    operations,
    components: { messages, schemas },
  };
}
