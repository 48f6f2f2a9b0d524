import { GroupCommitLanes, takeDistinct } from 'src/common/database/group-commit';
import { clientKey } from './client-address';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { FailureStore, type FailureWindow } from './failure-store';

const WINDOW_MS = 60_000;

interface PendingFailure {
  client: string;
  at: number;
  done: (window: FailureWindow | Error) => void;
}

export interface FailureLimiterOptions {
  now?: () => number;
  /** Clients remembered by this instance; past it the least recently seen is forgotten here (the database keeps its count). */
  maxLocalClients?: number;
  /** How long this instance trusts what it last read of a client before reading it again. */
  refreshMs?: number;
}

/**
 * Counts failed authentications per client (an IPv4 address or an IPv6 /64) in a one-minute window
 * shared by every instance (the `auth_failures` table); past the limit the client is refused (429)
 * until its window ends, whatever it presents. Each instance keeps a bounded local copy, read again
 * after `refreshMs`, so a request costs no query unless its client is new or its copy is stale; a
 * failure always goes to the database (failures arriving together in one statement). No count is ever dropped to make room: a client forgotten
 * locally is read back from the database when it comes again.
 */
export class FailureLimiter {
  private readonly local = new Map<string, { window: FailureWindow | null; readAt: number }>();
  /** Reads in flight, by client (as many as the requests waiting on them, at most). */
  private readonly reads = new Map<string, Promise<FailureWindow | null>>();
  private readonly now: () => number;
  private readonly maxLocalClients: number;
  private readonly refreshMs: number;
  private lastCleanup: number;
  /** Failures arriving together share one statement (a spray of them costs the database little). */
  private readonly writes: GroupCommitLanes<PendingFailure>;

  constructor(
    private readonly scope: string,
    private readonly limitPerMinute: number,
    private readonly store: FailureStore,
    options: FailureLimiterOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.maxLocalClients = options.maxLocalClients ?? 10_000;
    this.refreshMs = options.refreshMs ?? 1_000;
    this.lastCleanup = this.now();
    this.writes = new GroupCommitLanes<PendingFailure>(
      2,
      (queue) => takeDistinct(queue, 1_000, (f) => [f.client]),
      (batch) => this.write(batch),
    );
  }

  /** Seconds until the client at this address may try again, or 0 when it may now. */
  async retryAfter(address: string | undefined): Promise<number> {
    const client = clientKey(address);
    const now = this.now();
    let known = this.local.get(client);
    if (!known || now - known.readAt >= this.refreshMs) {
      // Requests of one client arriving together share one read (a busy control plane is one client).
      let read = this.reads.get(client);
      if (!read) {
        read = this.store.read(this.scope, client).finally(() => this.reads.delete(client));
        this.reads.set(client, read);
      }
      known = { window: await read, readAt: now };
    }
    this.remember(client, known);
    return this.wait(known.window, now);
  }

  /** Records a failure of the client at this address; returns the seconds it must now wait (0: none). */
  async fail(address: string | undefined): Promise<number> {
    const client = clientKey(address);
    const now = this.now();
    const window = await new Promise<FailureWindow>((resolve, reject) =>
      this.writes.push(client, { client, at: now, done: (w) => (w instanceof Error ? reject(w) : resolve(w)) }),
    );
    this.remember(client, { window, readAt: now });
    if (now - this.lastCleanup >= WINDOW_MS) {
      this.lastCleanup = now;
      await this.store.deleteEnded(now, WINDOW_MS);
    }
    return this.wait(window, now);
  }

  /** Clients this instance remembers (at most maxLocalClients). */
  get localClients(): number {
    return this.local.size;
  }

  private async write(batch: PendingFailure[]): Promise<void> {
    try {
      const windows = await this.store.fail(this.scope, batch, WINDOW_MS);
      for (const f of batch) f.done(windows.get(f.client) ?? new Error(`no failure window returned for ${f.client}`));
    } catch (error) {
      for (const f of batch) f.done(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private wait(window: FailureWindow | null, now: number): number {
    if (!window || window.failures < this.limitPerMinute) return 0;
    const ends = window.start + WINDOW_MS;
    return ends > now ? Math.max(1, Math.ceil((ends - now) / 1000)) : 0;
  }

  /** Least recently seen first: a Map keeps insertion order, so a seen client is moved to the end. */
  private remember(client: string, entry: { window: FailureWindow | null; readAt: number }): void {
    this.local.delete(client);
    this.local.set(client, entry);
    while (this.local.size > this.maxLocalClients) this.local.delete(this.local.keys().next().value!);
  }
}

/**
 * The failed authentications of API keys, wherever a key is presented: the API's guard and the
 * admin console's sign-in share it, so one budget per client covers both (AUTH_FAILURES_PER_MINUTE).
 */
@Injectable()
export class ApiKeyFailures extends FailureLimiter {
  constructor(store: FailureStore, @Inject(APP_CONFIG) config: AppConfig) {
    super('api-key', config.authFailuresPerMinute, store);
  }
}
