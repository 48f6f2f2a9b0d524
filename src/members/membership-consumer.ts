import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { z } from 'zod';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { jsonTextOf } from 'src/common/json-limits';
import { withCorrelation } from 'src/common/context/correlation';
import { DEFAULT_TOPICS } from 'src/common/config/config.schema';
import { inTransaction } from 'src/common/database/transaction';
import type { Finding } from 'src/common/errors/billing.exception';
import { findingsOf } from 'src/common/http/zod-validation.pipe';
import { MessageBus, type InboundMessage, type OutboundMessage } from 'src/infra/kafka/message-bus';
import { deadLetter, publishDeadLetters } from 'src/messaging/dead-letter';
import { receiveOnce } from 'src/messaging/inbox';
import { ACCOUNT_ID_PATTERN } from 'src/common/auth/scopes';
import { USER_ID } from './dto/member.dto';
import { MembersService, type MemberChange } from './members.service';
import { eventInstant } from 'src/common/http/api-schemas';
import { Clock } from 'src/infra/clock/clock';
import { Metrics } from 'src/health/metrics';

/** The inbox source of membership events: the contract's topic name (whatever the topic is configured as). */
const INBOX_SOURCE = DEFAULT_TOPICS.membership;

/** A message on `accounts.membership.v1` (keyed by accountId); the AsyncAPI document is made from this schema. */
export function membershipEventSchema(now: () => Date) {
  return z
    .object({
      id: z.string().min(1).max(256).meta({ description: 'The dedup key, forever' }),
      type: z.enum(['member.added', 'member.removed']),
      // The lifecycle events' rule: a change stamped far ahead would outrank every change made meanwhile (HTTP ones too).
      occurredAt: eventInstant(now).meta({ description: 'After 2000-01-01 and at most 24 hours ahead of the service clock' }),
      accountId: z.string().regex(ACCOUNT_ID_PATTERN, 'must be 1-128 characters of letters, digits and _.:-'),
      // The rule of the HTTP member routes: a member added here can be removed there.
      userId: z.string().regex(USER_ID, 'must be 1-128 characters of letters, digits and _.:-'),
    })
    .meta({
      id: 'MembershipEvent',
      description: 'A seat change of an organization; a redelivery does nothing, and changes apply by occurredAt per member',
    });
}

export type MembershipParser = (value: Buffer | null) => MemberChange | { reason: string; findings: Finding[] };

/**
 * A parser of membership messages, its schema built once: a change, or why the message is not one
 * (the JSON limits first: nothing recursive runs before them). `now` bounds how far ahead an event may be stamped.
 */
export function membershipParser(now: () => Date): MembershipParser {
  const schema = membershipEventSchema(now);
  return (value) => {
    const { text, problem } = jsonTextOf(value ?? new Uint8Array());
    if (problem !== undefined) return { reason: problem, findings: [{ field: 'value', message: problem }] };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { reason: 'not JSON', findings: [{ field: 'value', message: 'is not JSON' }] };
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const findings = findingsOf(parsed.error);
      return { reason: `invalid event: ${findings.map((f) => `${f.field}: ${f.message}`).join('; ')}`, findings };
    }
    return { ...parsed.data, occurredAt: new Date(parsed.data.occurredAt) };
  };
}

/**
 * Consumes `accounts.membership.v1`: each batch in one transaction, every event id recorded in the
 * inbox with its effect (a redelivery does nothing), changes applied by occurredAt per member (out
 * of order safe). Seats are pushed to Stripe after the commit.
 */
@Injectable()
export class MembershipConsumer implements OnModuleInit {
  private readonly logger = new Logger('MembershipConsumer');
  private readonly parse: MembershipParser;

  constructor(
    private readonly bus: MessageBus,
    private readonly members: MembersService,
    @InjectDataSource() private readonly ds: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
    clock: Clock,
  ) {
    this.parse = membershipParser(() => clock.now());
  }

  onModuleInit(): void {
    if (!this.config.kafka) return;
    this.bus.subscribe({ topic: this.config.topics.membership, handle: (batch) => this.handle(batch) });
  }

  async handle(batch: InboundMessage[]): Promise<void> {
    const changes: MemberChange[] = [];
    const poison: OutboundMessage[] = [];
    const dlqTopic = this.config.topics.membershipDlq;
    for (const message of batch) {
      const parsed = this.parse(message.value);
      if ('reason' in parsed) poison.push(deadLetter(dlqTopic, message, parsed.reason, 'DL_BILLING_REQUEST_INVALID', parsed.findings));
      else changes.push(parsed);
    }
    // Parked before the batch's offsets move (as lifecycle messages are), and consumption goes on.
    if (poison.length > 0) {
      await publishDeadLetters(this.bus, poison);
      this.metrics.membershipDeadLettered.inc(poison.length);
      this.logger.warn(`${poison.length} membership message(s) sent to ${dlqTopic}: ${poison[0]!.headers!['x-dlq-reason']}`);
    }
    if (changes.length === 0) return;
    const changed = await inTransaction(this.ds, async (em) => {
      const ids = [...new Set(changes.map((c) => c.id))];
      const fresh = await receiveOnce(em, INBOX_SOURCE, ids);
      const seen = new Set<string>();
      const todo = changes.filter((c) => fresh.has(c.id) && !seen.has(c.id) && seen.add(c.id));
      return this.members.apply(em, todo, 'kafka', `kafka:${INBOX_SOURCE}`);
    });
    // Each account's seat sync is audited under the latest change event of that account.
    const latest = new Map(changes.map((c) => [c.accountId, c.id]));
    for (const accountId of changed) {
      withCorrelation({ id: latest.get(accountId)!, kind: 'event' }, () => this.members.seatsChanged([accountId]));
    }
  }
}
