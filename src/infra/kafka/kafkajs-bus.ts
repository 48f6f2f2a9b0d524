import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Kafka, logLevel, Partitioners, type Consumer, type ISocketFactory, type Producer, type RetryOptions } from 'kafkajs';
import type { KafkaConfig, Topics } from 'src/common/config/config';
import {
  MessageBus,
  MessageTooLarge,
  type BusHealth,
  type ConsumerLag,
  type InboundMessage,
  type OutboundMessage,
  type Subscription,
  type TopicSize,
} from './message-bus';
import { fixKafkajsRequestQueue } from './request-queue-fix';

/** Largest slice of a fetched batch handled in one database transaction. */
const CHUNK = 2_000;
/** How long the start waits for the broker before it goes on without it (and keeps trying). */
const START_WAIT_MS = 15_000;
/**
 * How long the start waits for the consumers to join their groups once the broker has answered: a
 * restart after a crash joins only when the dead instance's session ends (KAFKA_SESSION_TIMEOUT_MS),
 * and reservations must not wait for that.
 */
const JOIN_WAIT_MS = 5_000;
/** Pause before connecting again after a failed attempt, doubled up to the maximum. */
const RECONNECT_MS = 1_000;
const RECONNECT_MAX_MS = 30_000;
/** How often a connected bus checks that the broker answers (KafkajsBusOptions.brokerProbeEveryMs). */
const PROBE_EVERY_MS = 5_000;
/** What one fetch may bring, per partition and in all (kafkajs' defaults: 1 MiB and 10 MiB). */
const FETCH_BYTES_PER_PARTITION = 1024 * 1024;
const FETCH_BYTES = 4 * 1024 * 1024;
/**
 * How long a fetch waits at the broker for messages when there are none (kafkajs' default: 5 s). A
 * consumer that stops (SIGTERM, a restart) waits for its fetch in flight, so this bounds that wait;
 * messages that arrive are returned at once whatever it is.
 */
const FETCH_MAX_WAIT_MS = 1_000;

/** The brokers and group, and the topics the bus makes sure exist before it consumes or sends. */
export type KafkajsBusConfig = KafkaConfig & { topics: Topics };

export interface KafkajsBusOptions {
  /** Test-only: SIGKILL the process after this many handled chunks, before their offsets are resolved. */
  killAfterBatch?: number;
  /**
   * How long after a crash kafkajs does not recover from (a non-retriable error) the consumer is
   * started again, doubled at each crash in a row up to 5 minutes (default 5 s).
   */
  restartAfterMs?: number;
  /** Told, after each handled chunk, how many messages of the partition remain behind it. */
  observeLag?: (topic: string, partition: number, lag: number) => void;
  /** How long the start waits for the broker before it goes on without it (default START_WAIT_MS). */
  startWaitMs?: number;
  /** How long it then waits for the consumers to join (default JOIN_WAIT_MS). */
  joinWaitMs?: number;
  /**
   * Told every `brokerLagEveryMs` (default 30 s) the lag of each consumed partition as the broker has
   * it (the group's committed offset against the end): it rises while the consumer is stuck or
   * crashed, when no batch reports anything.
   */
  observeBrokerLag?: (lags: ConsumerLag[]) => void;
  brokerLagEveryMs?: number;
  /**
   * How often a connected bus asks the broker for its cluster (default 5 s): health says the broker
   * is unreachable from the first probe that fails to the next that succeeds, even when nothing is
   * sent (kafkajs' own connections say nothing until they are used).
   */
  brokerProbeEveryMs?: number;
  /** Test-only: how the clients open their connections (a test routes them through a proxy it can close). */
  socketFactory?: ISocketFactory;
}

/** kafkajs behind MessageBus: an idempotent producer and one eachBatch consumer per subscription. */
export class KafkajsBus extends MessageBus implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly enabled = true;
  private readonly logger = new Logger('Kafka');
  private readonly kafka: Kafka;
  /** The broker probe's client: no retries, so that a probe of a broker gone away fails at once. */
  private readonly probeKafka: Kafka;
  private readonly producer: Producer;
  private readonly subscriptions: Subscription[] = [];
  private readonly consumers: { consumer: Consumer; topic: string; state: 'starting' | 'running' | 'crashed' }[] = [];
  private producerReady = false;
  /** Whether topics, producer and consumers are all up; until then, what the last attempt failed on. */
  private connected = false;
  private connectProblem = 'no answer yet';
  /** Told by the first connection attempt once topics and producer are up (the start's first wait ends). */
  private brokerAnswered?: () => void;
  /** The last publish that failed, while none has succeeded since (a broker outage the producer sees). */
  private publishFailing: { since: Date; error: string } | null = null;
  /** The first failed probe of the broker, while none has succeeded since (watchBroker). */
  private brokerUnreachable: { since: Date; error: string } | null = null;
  private handledChunks = 0;
  private stopping = false;
  /** Crashes kafkajs did not recover from since the group last handled a batch, per group: the restart's backoff. */
  private readonly crashesInARow = new Map<string, number>();
  private consumersStopped?: Promise<void>;

  constructor(
    private readonly config: KafkajsBusConfig,
    private readonly options: KafkajsBusOptions = {},
  ) {
    super();
    const fix = fixKafkajsRequestQueue();
    if (!fix.applied) this.logger.warn(`${fix.reason}: each broker connection keeps a 1-ms timer (request-queue-fix.ts)`);
    const client = (retry: RetryOptions) =>
      new Kafka({
        clientId: config.clientId,
        brokers: config.brokers,
        logLevel: logLevel.WARN,
        logCreator: () => (entry) => {
          const text = `${entry.log.message}${entry.log.error ? `: ${String(entry.log.error)}` : ''}`;
          if (entry.level <= logLevel.ERROR) this.logger.error(text);
          else this.logger.warn(text);
        },
        retry,
        ...(options.socketFactory ? { socketFactory: options.socketFactory } : {}),
      });
    this.kafka = client({ initialRetryTime: 200, retries: 10 });
    // kafkajs reconnects a client's lost broker with the client's retry, whatever the producer's or
    // the admin's own: with the one above (10 retries, up to 30 s apart) a send after the broker
    // went away waited about 3 minutes, holding the relay's transaction, and a probe 2 minutes.
    // The producer and the probe have clients of their own, with retries of their own.
    this.probeKafka = client({ retries: 0 });
    this.producer = client({ initialRetryTime: 200, retries: 4, maxRetryTime: 2_000 }).producer({
      idempotent: true,
      maxInFlightRequests: 1,
      allowAutoTopicCreation: true,
      createPartitioner: Partitioners.DefaultPartitioner,
      // A send to an unreachable broker fails within seconds (the outbox keeps the messages and the
      // relay tries again), rather than holding the relay's transaction for minutes.
      retry: { initialRetryTime: 200, retries: 5, maxRetryTime: 2_000 },
    });
    this.producer.on(this.producer.events.DISCONNECT, () => {
      this.producerReady = false;
    });
    this.producer.on(this.producer.events.CONNECT, () => {
      this.producerReady = true;
      this.publishFailing = null;
    });
  }

  subscribe(subscription: Subscription): void {
    this.subscriptions.push(subscription);
  }

  async publish(messages: OutboundMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const byTopic = new Map<string, OutboundMessage[]>();
    for (const m of messages) byTopic.set(m.topic, [...(byTopic.get(m.topic) ?? []), m]);
    try {
      await this.producer.sendBatch({
        acks: -1,
        topicMessages: [...byTopic].map(([topic, list]) => ({
          topic,
          messages: list.map((m) => ({ key: m.key, value: m.value, headers: m.headers })),
        })),
      });
      this.publishFailing = null;
    } catch (error) {
      if (tooLarge(error)) throw new MessageTooLarge(error);
      this.publishFailing ??= { since: new Date(), error: String(error) };
      throw error;
    }
  }

  health(): BusHealth {
    if (!this.connected) return { ok: false, detail: `not connected to ${this.config.brokers.join(',')}: ${this.connectProblem}` };
    if (this.publishFailing) {
      return { ok: false, detail: `publishing fails since ${this.publishFailing.since.toISOString()}: ${this.publishFailing.error}` };
    }
    if (this.brokerUnreachable) {
      return {
        ok: false,
        detail: `broker unreachable since ${this.brokerUnreachable.since.toISOString()}: ${this.brokerUnreachable.error}`,
      };
    }
    if (!this.producerReady) return { ok: false, detail: 'producer not connected' };
    const down = this.consumers.filter((c) => c.state === 'crashed').map((c) => c.topic);
    if (down.length > 0) return { ok: false, detail: `consumer crashed: ${down.join(', ')}` };
    return { ok: true, detail: `connected to ${this.config.brokers.join(',')}` };
  }

  /**
   * Connects (topics, producer, consumers). The start waits for the broker for START_WAIT_MS at
   * most: a broker outage must not keep an instance from serving reservations, so past that it starts
   * without the broker and keeps connecting in the background (health says so until it is up). Once
   * the broker has answered, it waits JOIN_WAIT_MS at most for the consumers to join their groups
   * (after a crash that lasts until the dead instance's session ends), then lets them join in the
   * background.
   */
  async onApplicationBootstrap(): Promise<void> {
    const answered = new Promise<'answered'>((resolve) => (this.brokerAnswered = () => resolve('answered')));
    const first = this.connect();
    const wait = (ms: number) => new Promise<false>((resolve) => setTimeout(() => resolve(false), ms).unref());
    let up = await Promise.race([first, answered, wait(this.options.startWaitMs ?? START_WAIT_MS)]);
    if (up === 'answered') up = await Promise.race([first, wait(this.options.joinWaitMs ?? JOIN_WAIT_MS)]);
    if (up === true) return;
    if (this.producerReady) {
      this.logger.warn(`Kafka consumers still joining their groups: starting, they join in the background`);
      void first.then((done) => (done ? undefined : this.reconnect(RECONNECT_MS)));
      return;
    }
    this.logger.error(
      `Kafka not reachable at ${this.config.brokers.join(',')} (${this.connectProblem}): starting without it, connecting in the background`,
    );
    void first.then((done) => (done ? undefined : this.reconnect(RECONNECT_MS)));
  }

  /** One attempt at connecting everything; false (and why, in connectProblem) when it failed. */
  private async connect(): Promise<boolean> {
    try {
      await this.ensureTopics();
      await this.producer.connect();
      this.producerReady = true;
      this.connectProblem = 'consumers joining their groups';
      this.brokerAnswered?.();
      if (this.stopping) return false;
      await this.startConsumers();
      this.connected = true;
      this.publishFailing = null;
      this.watchBrokerLag();
      this.watchBroker();
      this.logger.log(
        `Kafka connected (${this.config.brokers.join(',')}), consuming ${this.subscriptions.map((s) => s.topic).join(', ') || 'nothing'}`,
      );
      return true;
    } catch (error) {
      this.connectProblem = String(error);
      // Consumers of a failed attempt are dropped: the next attempt starts them all again.
      const started = this.consumers.splice(0);
      await Promise.allSettled(started.map((c) => c.consumer.disconnect()));
      return false;
    }
  }

  private lagTimer?: NodeJS.Timeout;

  private watchBrokerLag(): void {
    const observe = this.options.observeBrokerLag;
    if (!observe || this.lagTimer) return;
    this.lagTimer = setInterval(() => {
      if (this.stopping) return;
      this.consumerLag().then(observe, (error: unknown) => this.logger.warn(`consumer lag not read from the broker: ${String(error)}`));
    }, this.options.brokerLagEveryMs ?? 30_000);
    this.lagTimer.unref();
  }

  private probeTimer?: NodeJS.Timeout;

  private watchBroker(): void {
    if (this.probeTimer) return;
    let probing = false;
    this.probeTimer = setInterval(() => {
      if (this.stopping || probing) return;
      probing = true;
      this.probeBroker()
        .then(
          () => (this.brokerUnreachable = null),
          (error: unknown) => (this.brokerUnreachable ??= { since: new Date(), error: String(error) }),
        )
        .finally(() => (probing = false));
    }, this.options.brokerProbeEveryMs ?? PROBE_EVERY_MS);
    this.probeTimer.unref();
  }

  /** One question to the cluster on a connection of its own, without retries. */
  private async probeBroker(): Promise<void> {
    const admin = this.probeKafka.admin({ retry: { retries: 0 } });
    try {
      await admin.connect();
      await admin.describeCluster();
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }

  private async reconnect(delayMs: number): Promise<void> {
    if (this.stopping) return;
    await new Promise((r) => setTimeout(r, delayMs).unref());
    if (this.stopping) return;
    if (await this.connect()) return;
    this.logger.warn(`Kafka still not reachable (${this.connectProblem}): trying again`);
    await this.reconnect(Math.min(RECONNECT_MAX_MS, delayMs * 2));
  }

  /** kafkajs waits for the batch in hand (its chunk is finished, its offsets committed) before leaving the group. */
  stopConsuming(): Promise<void> {
    this.stopping = true;
    clearInterval(this.lagTimer);
    clearInterval(this.probeTimer);
    this.consumersStopped ??= Promise.allSettled(this.consumers.map((c) => c.consumer.disconnect())).then(() => undefined);
    return this.consumersStopped;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stopConsuming();
    await this.producer.disconnect().catch(() => undefined);
    this.producerReady = false;
  }

  private async ensureTopics(): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const existing = new Set(await admin.listTopics());
      const wanted = Object.values(this.config.topics).filter((t) => !existing.has(t));
      if (wanted.length > 0) {
        await admin.createTopics({ waitForLeaders: true, topics: wanted.map((topic) => ({ topic })) });
      }
    } finally {
      await admin.disconnect();
    }
  }

  /**
   * One consumer per group (subscriptions without a group of their own share the configured one),
   * subscribed to all of that group's topics; each batch goes to its topic's handler.
   */
  private async startConsumers(): Promise<void> {
    for (const [groupId, subs] of this.groups()) await this.startConsumer(groupId, subs);
  }

  private groups(): Map<string, Subscription[]> {
    const groups = new Map<string, Subscription[]>();
    for (const sub of this.subscriptions) {
      const group = sub.groupId ?? this.config.groupId;
      groups.set(group, [...(groups.get(group) ?? []), sub]);
    }
    return groups;
  }

  /** Committed offsets of each group against each partition's high watermark, from the broker (not this instance's view). */
  async consumerLag(): Promise<ConsumerLag[]> {
    const admin = this.kafka.admin({ retry: { retries: 1, initialRetryTime: 200 } });
    await admin.connect();
    try {
      const lags: ConsumerLag[] = [];
      for (const [group, subs] of this.groups()) {
        const topics = subs.map((s) => s.topic);
        for (const { topic, partitions } of await admin.fetchOffsets({ groupId: group, topics })) {
          const ends = new Map((await admin.fetchTopicOffsets(topic)).map((o) => [o.partition, o]));
          for (const p of partitions) {
            const end = Number(ends.get(p.partition)?.high ?? 0);
            const committed = Number(p.offset) >= 0 ? Number(p.offset) : null;
            // Before a first commit the group starts at the oldest message still kept.
            const from = committed ?? Number(ends.get(p.partition)?.low ?? 0);
            lags.push({ group, topic, partition: p.partition, committed, end, lag: Math.max(0, end - from) });
          }
        }
      }
      return lags.sort((a, b) => a.group.localeCompare(b.group) || a.topic.localeCompare(b.topic) || a.partition - b.partition);
    } finally {
      await admin.disconnect();
    }
  }

  /** Messages kept on each topic (high minus low watermark over its partitions), from the broker. */
  async topicSizes(topics: string[]): Promise<TopicSize[]> {
    const admin = this.kafka.admin({ retry: { retries: 1, initialRetryTime: 200 } });
    await admin.connect();
    try {
      const existing = new Set(await admin.listTopics());
      const sizes: TopicSize[] = [];
      for (const topic of topics) {
        const offsets = existing.has(topic) ? await admin.fetchTopicOffsets(topic) : [];
        sizes.push({ topic, messages: offsets.reduce((n, o) => n + Math.max(0, Number(o.high) - Number(o.low)), 0) });
      }
      return sizes;
    } finally {
      await admin.disconnect();
    }
  }

  private async startConsumer(groupId: string, subs: Subscription[]): Promise<void> {
    const handlers = new Map(subs.map((s) => [s.topic, s.handle]));
    const topics = [...handlers.keys()];
    const consumer = this.kafka.consumer({
      groupId,
      sessionTimeout: this.config.sessionTimeoutMs,
      heartbeatInterval: Math.min(3_000, Math.floor(this.config.sessionTimeoutMs / 3)),
      // One fetch's messages are in memory at once, decoded and parsed (several times their bytes):
      // bounded so that a consumer behind its topic stays within the service's memory budget. A
      // partition's fetch still carries several chunks of events.
      maxBytesPerPartition: FETCH_BYTES_PER_PARTITION,
      maxBytes: FETCH_BYTES,
      maxWaitTimeInMs: FETCH_MAX_WAIT_MS,
      retry: { retries: 8 },
    });
    const entry = { consumer, topic: topics.join(','), state: 'starting' as 'starting' | 'running' | 'crashed' };
    this.consumers.push(entry);
    consumer.on(consumer.events.GROUP_JOIN, () => {
      entry.state = 'running';
    });
    consumer.on(consumer.events.END_BATCH_PROCESS, () => {
      this.crashesInARow.set(groupId, 0);
    });
    consumer.on(consumer.events.CRASH, (event) => {
      const restart = event.payload.restart;
      if (restart || this.stopping) {
        this.logger.error(`consumer of ${entry.topic} crashed (restarting): ${String(event.payload.error)}`);
        return;
      }
      // kafkajs gives up on a non-retriable error: the consumer is started again after a pause, so
      // that one such error does not stop consumption until the next deployment.
      entry.state = 'crashed';
      const crashes = (this.crashesInARow.get(groupId) ?? 0) + 1;
      this.crashesInARow.set(groupId, crashes);
      const delay = Math.min(300_000, (this.options.restartAfterMs ?? 5_000) * 2 ** (crashes - 1));
      this.logger.error(`consumer of ${entry.topic} crashed (started again in ${delay} ms): ${String(event.payload.error)}`);
      setTimeout(() => void this.restartConsumer(entry, groupId, subs), delay).unref();
    });
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: true });
    await consumer.run({
      // Messages are keyed by account, so partitions in flight at once never share an account.
      partitionsConsumedConcurrently: 4,
      eachBatchAutoResolve: false,
      autoCommit: true,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale, commitOffsetsIfNecessary }) => {
        const handle = handlers.get(batch.topic);
        if (!handle) return;
        for (let i = 0; i < batch.messages.length; i += CHUNK) {
          if (!isRunning() || isStale()) return;
          const slice = batch.messages.slice(i, i + CHUNK);
          const messages: InboundMessage[] = slice.map((m) => ({
            topic: batch.topic,
            partition: batch.partition,
            offset: m.offset,
            key: m.key,
            value: m.value,
          }));
          await handle(messages);
          this.afterCommitFault();
          const last = slice[slice.length - 1];
          if (last) {
            resolveOffset(last.offset);
            this.options.observeLag?.(batch.topic, batch.partition, Math.max(0, Number(batch.highWatermark) - Number(last.offset) - 1));
          }
          await heartbeat();
        }
        await commitOffsetsIfNecessary();
      },
    });
  }

  /** A consumer kafkajs stopped, replaced by a new one of the same group and topics. */
  private async restartConsumer(entry: { consumer: Consumer }, groupId: string, subs: Subscription[]): Promise<void> {
    if (this.stopping) return;
    const at = this.consumers.indexOf(entry as (typeof this.consumers)[number]);
    if (at >= 0) this.consumers.splice(at, 1);
    await entry.consumer.disconnect().catch(() => undefined);
    await this.startConsumer(groupId, subs).catch((error: unknown) => {
      this.logger.error(`consumer of group ${groupId} could not be started again: ${String(error)}`);
    });
  }

  /** The crash window the inbox protects against: effects committed, offsets not yet. */
  private afterCommitFault(): void {
    const limit = this.options.killAfterBatch;
    if (limit === undefined) return;
    this.handledChunks += 1;
    if (this.handledChunks >= limit) process.kill(process.pid, 'SIGKILL');
  }
}

/** Whether kafkajs failed a send because the broker refused a message or record batch as too large (codes 10 and 18). */
function tooLarge(error: unknown): boolean {
  for (let e = error as { type?: string; cause?: unknown; originalError?: unknown } | undefined; e;) {
    if (e.type === 'MESSAGE_TOO_LARGE' || e.type === 'RECORD_LIST_TOO_LARGE') return true;
    e = (e.originalError ?? e.cause) as typeof e;
  }
  return false;
}
