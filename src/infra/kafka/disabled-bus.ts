import { BillingException } from 'src/common/errors/billing.exception';
import { MessageBus, type BusHealth, type ConsumerLag, type OutboundMessage, type Subscription, type TopicSize } from './message-bus';

/** Used when KAFKA_BROKERS is unset: events come over HTTP only, and nothing is published. */
export class DisabledBus extends MessageBus {
  readonly enabled = false;

  publish(_messages: OutboundMessage[]): Promise<void> {
    return Promise.reject(new BillingException('DL_BILLING_UNAVAILABLE', 'Kafka is not configured'));
  }

  subscribe(_subscription: Subscription): void {
    // Nothing to consume without a broker; HTTP ingestion takes the events.
  }

  health(): BusHealth {
    return { ok: true, detail: 'disabled (events over HTTP only)' };
  }

  consumerLag(): Promise<ConsumerLag[] | null> {
    return Promise.resolve(null);
  }

  topicSizes(_topics: string[]): Promise<TopicSize[] | null> {
    return Promise.resolve(null);
  }

  stopConsuming(): Promise<void> {
    return Promise.resolve();
  }
}
