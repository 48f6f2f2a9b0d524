import { Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import { parseCredits } from '../../src/common/money';
import { fixKafkajsRequestQueue } from '../../src/infra/kafka/request-queue-fix';
import { SMALL } from '../support/accounts';
import { uid } from '../support/app';
import { plannedHistory, type PlannedEvent } from '../support/scenarios';

export const FULL = process.env.FAULTS_FULL === '1' || process.env.FAULTS_FULL === 'true';

/** The short form (CI) and the full size (FAULTS_FULL=1). */
export const SIZE = FULL
  ? { accounts: 8, runtimes: 800, eventsPerRuntime: 30, neverStarted: 20, kills: 20, loadMs: 150_000 }
  : { accounts: 4, runtimes: 120, eventsPerRuntime: 20, neverStarted: 4, kills: 4, loadMs: 25_000 };

const FUNDS = 100_000_000_000n; // 100,000 credits: no reservation is ever refused for money
const MINUTES = 60;

export interface Api {
  (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
}

/** Calls the running service with the admin key; `port()` is read per call, so it follows restarts. */
export function serviceApi(port: () => number, adminKey: string): Api {
  return async (method, path, body, headers = {}) => {
    const res = await fetch(`http://127.0.0.1:${port()}${path}`, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, body: parsed };
  };
}

interface PlannedRuntime {
  id: string;
  accountId: string;
  history: PlannedEvent[];
  ratePerHour: bigint;
  hold: bigint;
}

export interface LifecycleMessage {
  key: string;
  value: string;
}

/**
 * One scenario's load: funded accounts, runtimes reserved over HTTP, and for each a generated
 * history (started, heartbeats, pauses and resumes, terminated, now and then a failed launch).
 * Reservations that never start are there for the sweeper. The expected charges are computed
 * here from the generated events alone, without the service's session code.
 */
export class Workload {
  readonly tag = uid('flt');
  readonly accounts: string[];
  readonly runtimes: PlannedRuntime[] = [];
  readonly neverStarted: string[] = [];
  private readonly t0 = Date.now() - 6 * 3600_000;

  constructor(
    private readonly api: Api,
    readonly size: typeof SIZE,
    private readonly seed: number,
  ) {
    this.accounts = Array.from({ length: size.accounts }, (_, i) => `${this.tag}_acc${i}`);
  }

  async prepare(): Promise<void> {
    for (const id of this.accounts) {
      await this.must(201, 'POST', '/v1/accounts', { id, kind: 'user', plan: 'enterprise', name: `faults ${id}` });
      await this.must(
        201,
        'POST',
        `/v1/admin/accounts/${id}/grants`,
        { credits: formatMicros(FUNDS), reason: 'fault-injection load' },
        { 'idempotency-key': `${id}-funds` },
      );
    }
    const planned = Array.from({ length: this.size.runtimes }, (_, r) => ({
      id: `${this.tag}_rt${r}`,
      accountId: this.accounts[r % this.accounts.length]!,
      history: plannedHistory(this.seed * 100_000 + r, this.size.eventsPerRuntime),
    }));
    const idle = Array.from({ length: this.size.neverStarted }, (_, r) => ({
      id: `${this.tag}_idle${r}`,
      accountId: this.accounts[r % this.accounts.length]!,
    }));
    for (let i = 0; i < planned.length; i += 25) {
      const batch = planned.slice(i, i + 25);
      const answers = await Promise.all(
        batch.map((p) =>
          this.must(201, 'POST', '/v1/reservations', { accountId: p.accountId, runtimeId: p.id, ...SMALL, minutes: MINUTES }),
        ),
      );
      batch.forEach((p, j) => {
        const body = answers[j]!;
        this.runtimes.push({ ...p, ratePerHour: parseCredits(String(body.ratePerHour))!, hold: parseCredits(String(body.reserved))! });
      });
    }
    for (const p of idle) {
      await this.must(201, 'POST', '/v1/reservations', { accountId: p.accountId, runtimeId: p.id, ...SMALL, minutes: MINUTES });
      this.neverStarted.push(p.id);
    }
  }

  /** Every event once, in the order they happened (so runtimes interleave as in production). */
  messages(): LifecycleMessage[] {
    const all = this.runtimes.flatMap((rt) =>
      rt.history.map((e) => ({
        at: this.t0 + e.offsetMs,
        key: rt.accountId,
        value: JSON.stringify({
          id: `${rt.id}_e${e.n}`,
          type: e.type,
          occurredAt: new Date(this.t0 + e.offsetMs).toISOString(),
          accountId: rt.accountId,
          runtimeId: rt.id,
          seq: e.seq,
          data: e.data,
        }),
      })),
    );
    all.sort((a, b) => a.at - b.at);
    return all.map(({ key, value }) => ({ key, value }));
  }

  get eventCount(): number {
    return this.runtimes.reduce((n, rt) => n + rt.history.length, 0);
  }

  /** Charge per runtime: running time between started/resumed and paused/terminated, rounded up, capped at the hold. */
  expectedCharges(): Map<string, bigint> {
    const out = new Map<string, bigint>();
    for (const rt of this.runtimes) {
      let runningSince: number | null = null;
      let ms = 0;
      let failed = false;
      for (const e of rt.history) {
        if (e.type === 'runtime.started' || e.type === 'runtime.resumed') runningSince ??= e.offsetMs;
        else if ((e.type === 'runtime.paused' || e.type === 'runtime.terminated') && runningSince !== null) {
          ms += e.offsetMs - runningSince;
          runningSince = null;
        } else if (e.type === 'runtime.launch_failed') failed = true;
        if (e.type === 'runtime.terminated' || failed) break;
      }
      const charge = failed ? 0n : (rt.ratePerHour * BigInt(ms) + 3_599_999n) / 3_600_000n;
      out.set(rt.id, charge < rt.hold ? charge : rt.hold);
    }
    for (const id of this.neverStarted) out.set(id, 0n);
    return out;
  }

  fundsPerAccount(): bigint {
    return FUNDS;
  }

  private async must(status: number, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<any> {
    const res = await this.api(method, path, body, headers);
    if (res.status !== status) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }
}

function formatMicros(micros: bigint): string {
  return `${micros / 1_000_000n}.${(micros % 1_000_000n).toString().padStart(6, '0')}`;
}

/**
 * Sends messages to the lifecycle topic at a steady rate over `durationMs`, like a control plane
 * would. A send that fails (the broker is restarting) is retried until it goes through; the broker
 * may then hold a message twice, which the service must apply once.
 */
export class SteadyProducer {
  sent = 0;
  failedSends = 0;
  private hurried = false;
  readonly done: Promise<void>;

  constructor(
    private readonly brokers: string,
    private readonly topic: string,
    messages: LifecycleMessage[],
    durationMs: number,
  ) {
    this.done = this.run(messages, durationMs);
  }

  /** Sends what is left at once (the faults are over; no need to wait for the schedule). */
  hurry(): void {
    this.hurried = true;
  }

  private async run(messages: LifecycleMessage[], durationMs: number): Promise<void> {
    const tickMs = 100;
    const perTick = Math.max(1, Math.ceil(messages.length / Math.max(1, durationMs / tickMs)));
    // As the service's bus does: kafkajs' idle request queues would otherwise wake this process a
    // thousand times a second, beside the service under test (request-queue-fix.ts).
    fixKafkajsRequestQueue();
    const kafka = new Kafka({
      clientId: 'faults-load',
      brokers: [this.brokers],
      logLevel: logLevel.NOTHING,
      retry: { retries: 3, initialRetryTime: 200 },
    });
    let producer: Producer | undefined;
    const started = Date.now();
    try {
      for (let i = 0; i < messages.length;) {
        const chunk = messages.slice(i, i + perTick);
        try {
          if (!producer) {
            producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
            await producer.connect();
          }
          await producer.send({ topic: this.topic, acks: -1, messages: chunk });
          i += chunk.length;
          this.sent = i;
        } catch {
          this.failedSends += 1;
          await producer?.disconnect().catch(() => undefined);
          producer = undefined;
          await sleep(500);
          continue;
        }
        // Keep to the schedule: sleep until this chunk's slot has passed.
        const due = started + (i / perTick) * tickMs;
        if (due > Date.now() && !this.hurried) await sleep(due - Date.now());
      }
    } finally {
      await producer?.disconnect().catch(() => undefined);
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
