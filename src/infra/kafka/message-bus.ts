/** A message read from a topic. */
export interface InboundMessage {
  topic: string;
  partition: number;
  offset: string;
  /** Key and value as received, byte for byte. */
  key: Buffer | null;
  value: Buffer | null;
}

/** A message to publish: the service's own are JSON text; a dead letter's key and value are the refused message's bytes. */
export interface OutboundMessage {
  topic: string;
  key: string | Buffer | null;
  value: string | Buffer | null;
  headers?: Record<string, string>;
}

/** The broker refused a message (or a send's record batch) as larger than it takes. */
export class MessageTooLarge extends Error {
  constructor(cause: unknown) {
    super(`the broker refused a message as too large: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'MessageTooLarge';
  }
}

/** What a subscription does with a batch: its effects must be committed when the promise resolves. */
export type BatchHandler = (messages: InboundMessage[]) => Promise<void>;

export interface Subscription {
  topic: string;
  /** Consumer group; defaults to the configured group id. */
  groupId?: string;
  handle: BatchHandler;
}

/** How far a consumer group's committed offset is behind the end of one partition. */
export interface ConsumerLag {
  group: string;
  topic: string;
  partition: number;
  /** The group's committed offset; null before its first commit (it then starts at the oldest message). */
  committed: number | null;
  /** The partition's high watermark: the offset the next message will get. */
  end: number;
  lag: number;
}

/** How many messages a topic keeps (end minus start offset, over its partitions), read from the broker. */
export interface TopicSize {
  topic: string;
  messages: number;
}

export interface BusHealth {
  ok: boolean;
  detail: string;
}

/**
 * The service's view of Kafka: publish, and consume in batches whose offsets are resolved only
 * after the handler has committed its effects. kafkajs sits behind this one class.
 */
export abstract class MessageBus {
  abstract readonly enabled: boolean;
  abstract publish(messages: OutboundMessage[]): Promise<void>;
  /** Registers a subscription; consumption starts with the application. */
  abstract subscribe(subscription: Subscription): void;
  abstract health(): BusHealth;
  /** The lag of this service's consumer groups, per topic and partition, read from the broker; null without Kafka. */
  abstract consumerLag(): Promise<ConsumerLag[] | null>;
  /** The messages kept on each of these topics, read from the broker (0 for a topic not created yet); null without Kafka. */
  abstract topicSizes(topics: string[]): Promise<TopicSize[] | null>;
  /**
   * Shutdown: the consumers finish the batch in hand, commit its offsets and leave their groups
   * (the database is still open). Publishing still works until the application closes.
   */
  abstract stopConsuming(): Promise<void>;
}
