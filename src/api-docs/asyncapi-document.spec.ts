import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { ancillaryEventSchema } from 'src/ancillary/ancillary-event';
import { snapshotFlagCommandSchema } from 'src/ancillary/unpaid-storage';
import { membershipEventSchema } from 'src/members/membership-consumer';
import { terminateCommandSchema } from 'src/messaging/commands';
import { lifecycleEventDocSchema } from 'src/metering/dto/event.dto';
import { buildAsyncApiDocument } from './asyncapi-document';
import { deadLetterHeadersSchema } from 'src/messaging/dead-letter';
import { NOTIFICATION_TYPES, notificationMessage } from 'src/messaging/notifications';
import { NOTIFICATION_EXAMPLES, notificationMessageSchema } from './notification-schema';
import { topicsOf } from 'src/messaging/topics';

const REGENERATE = 'run `npm run openapi` after changing a message schema or a topic';

/** The AsyncAPI 3.0.0 JSON Schema, from the @asyncapi/specs package (the one @asyncapi/parser validates with). */
function asyncApiValidator() {
  const spec = createRequire(`${process.cwd()}/package.json`)('@asyncapi/specs/schemas/3.0.0.json') as object;
  // The spec bundles the draft-07 meta-schema it uses: ajv's own copy would be a second schema of that id.
  const ajv = new Ajv({ strict: false, allErrors: true, meta: false, validateSchema: false });
  addFormats(ajv);
  return ajv.compile(spec);
}

describe('the AsyncAPI document of the Kafka topics', () => {
  const doc = JSON.parse(JSON.stringify(buildAsyncApiDocument())) as {
    channels: Record<string, { address: string; messages: Record<string, unknown> }>;
    operations: Record<string, { action: string }>;
    components: { schemas: Record<string, unknown> };
  };
  const validate = asyncApiValidator();

  it(`is the checked-in docs/asyncapi.json (${REGENERATE})`, () => {
    expect(JSON.parse(readFileSync('docs/asyncapi.json', 'utf8')), REGENERATE).toEqual(doc);
  });

  it('is a valid AsyncAPI 3.0 document, and the check would see one that is not', () => {
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    const broken = structuredClone(doc);
    broken.operations[Object.keys(broken.operations)[0]!]!.action = 'consume';
    expect(validate(broken)).toBe(false);
  });

  it('has a channel for every topic the service consumes or publishes, each with its operation', () => {
    const addresses = Object.values(doc.channels).map((c) => c.address);
    expect(addresses.sort()).toEqual(Object.values(topicsOf({})).sort());
    expect(
      Object.values(doc.operations)
        .map((o) => o.action)
        .sort(),
    ).toEqual(['receive', 'receive', 'receive', 'send', 'send', 'send', 'send', 'send']);
  });

  it('has a data schema and an example for every notification type the service sends, each example valid', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const valid = ajv.compile(doc.components.schemas.Notification as object);
    expect(Object.keys(NOTIFICATION_EXAMPLES).sort()).toEqual([...NOTIFICATION_TYPES].sort());
    const message = (doc as unknown as { components: { messages: Record<string, { examples: { name: string; payload: unknown }[] }> } })
      .components.messages.Notification!;
    expect(message.examples.map((e) => e.name).sort()).toEqual([...NOTIFICATION_TYPES].sort());
    for (const example of message.examples) {
      expect(valid(example.payload), `${example.name}: ${JSON.stringify(valid.errors)}`).toBe(true);
      expect(notificationMessageSchema.safeParse(example.payload).success).toBe(true);
    }
  });

  it('holds each message to the zod schema its consumer or publisher uses', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const schema = (name: string) => ajv.compile(doc.components.schemas[name] as object);
    const notification = notificationMessage(
      'billing.notifications.v1',
      {
        type: 'credits.granted',
        accountId: 'acc_1',
        cause: 'grant:g1',
        data: { grantId: 'g1', source: 'admin', credits: '1.000000', expiresAt: null, reason: 'goodwill' },
      },
      new Date('2026-12-01T00:00:00Z'),
    ).payload;
    expect(notificationMessageSchema.parse(notification)).toEqual(notification);
    expect(schema('Notification')(notification)).toBe(true);
    // `data` is held to its type's schema: a field of another type, or one missing, is refused.
    for (const data of [
      { ...(notification.data as object), threshold: 80 },
      { grantId: 'g1', source: 'admin', credits: '1.000000' },
    ]) {
      expect(notificationMessageSchema.safeParse({ ...notification, data }).success).toBe(false);
      expect(schema('Notification')({ ...notification, data })).toBe(false);
    }
    const command = {
      id: 'cmd_1',
      type: 'runtime.terminate',
      accountId: 'acc_1',
      runtimeId: 'rt_1',
      reason: 'spend_limit',
      issuedAt: '2026-12-01T00:00:00.000Z',
    };
    expect(terminateCommandSchema.parse(command)).toEqual(command);
    expect(schema('Command')(command)).toBe(true);
    expect(schema('Command')({ ...command, reason: 'whim' })).toBe(false);
    const flag = {
      id: 'cmd_2',
      type: 'snapshot.flag_for_deletion',
      accountId: 'acc_1',
      snapshotId: 'snap_1',
      reason: 'storage_unpaid',
      unpaidSince: '2026-11-28T00:00:00.000Z',
      issuedAt: '2026-12-01T00:00:00.000Z',
    };
    expect(snapshotFlagCommandSchema.parse(flag)).toEqual(flag);
    expect(schema('Command')(flag)).toBe(true);
    expect(schema('Command')({ ...flag, snapshotId: undefined })).toBe(false);
    const egress = {
      id: 'evt_2',
      type: 'egress.reported',
      occurredAt: '2026-12-01T00:00:00.000Z',
      accountId: 'acc_1',
      runtimeId: 'rt_1',
      data: { bytes: 1024, from: '2026-11-30T23:00:00.000Z', to: '2026-12-01T00:00:00.000Z' },
    };
    expect(ancillaryEventSchema(() => new Date('2026-12-01T00:00:00Z')).safeParse(egress).success).toBe(true);
    expect(schema('AncillaryEvent')(egress)).toBe(true);
    expect(schema('AncillaryEvent')({ ...egress, type: 'snapshot.exploded' })).toBe(false);
    const event = {
      id: 'evt_1',
      type: 'runtime.started',
      occurredAt: '2026-12-01T00:00:00.000Z',
      accountId: 'acc_1',
      runtimeId: 'rt_1',
      seq: 1,
      data: {},
    };
    expect(lifecycleEventDocSchema.safeParse(event).success).toBe(true);
    expect(schema('LifecycleEvent')(event)).toBe(true);
    expect(schema('LifecycleEvent')({ ...event, extra: 1 })).toBe(false);
    const member = { id: 'm1', type: 'member.added', occurredAt: '2026-12-01T00:00:00Z', accountId: 'org_1', userId: 'u1' };
    expect(membershipEventSchema(() => new Date()).safeParse(member).success).toBe(true);
    expect(schema('MembershipEvent')(member)).toBe(true);
    const headers = {
      'x-dlq-reason': 'not JSON',
      'x-dlq-code': 'DL_BILLING_REQUEST_INVALID',
      'x-dlq-findings': '[]',
      'x-dlq-source': 't/0/1',
    };
    expect(deadLetterHeadersSchema.safeParse(headers).success).toBe(true);
    expect(schema('LifecycleDeadLetterHeaders')(headers)).toBe(true);
    expect(schema('MembershipDeadLetterHeaders')(headers)).toBe(true);
    expect(schema('AncillaryDeadLetterHeaders')(headers)).toBe(true);
  });
});
