// The load of bench/fleet.mjs: a compressed-time fleet of runtimes, each reserved over HTTP before
// its runtime.started, heartbeating, sometimes pausing, and terminating after an exponentially
// distributed lifetime; launches arrive as a Poisson stream. It remembers each runtime's running
// time, so the charges the service must arrive at are computed here, from the events alone.

const TICK_MS = 20;
const HEARTBEAT_MS = 30_000;
const MEAN_PAUSE_MS = 5 * 60_000;
const ENV = { variant: 'datalayer', environment: { name: 'python', sizeClass: 'small' } };
/** Messages per producer send: a few hundred KB, well under the broker's message.max.bytes (1 MB). */
const SEND_SLICE = 2_000;

const exponential = (mean) => -Math.log(1 - Math.random()) * mean;
const micros = (credits) => {
  const [whole, frac = ''] = String(credits).split('.');
  return BigInt(whole) * 1_000_000n + BigInt(frac.padEnd(6, '0').slice(0, 6));
};

export class FleetLoad {
  /** Messages sent to the topic so far. */
  sent = 0;
  alive = 0;
  #runtimes = [];
  #buckets = new Map();
  #pending = [];
  #sending = null;
  /** [messages sent once this send is done, wall time it started], in order: how old the oldest unconsumed message is. */
  #sends = [];
  #launchRate = 0;
  #nextLaunch = Infinity;
  #timer = null;
  #launchTimer = null;
  #tick = 0;
  #inflight = new Set();
  #w = null;

  constructor({ call, producer, topic, accounts, compression, lifetimeMin, pauseShare, requestTimeoutMs, tag, plannedWallSeconds = 3600 }) {
    Object.assign(this, { call, producer, topic, accounts, compression, pauseShare, requestTimeoutMs, tag });
    this.meanLifeMs = lifetimeMin * 60_000;
    // Reserved for 8 mean lifetimes; a lifetime is cut a minute short of that (1 in 3,000 would pass it).
    this.minutes = Math.ceil(8 * lifetimeMin);
    this.maxLifeMs = (this.minutes - 1) * 60_000;
    // Event time starts far enough in the past that the whole run stays before the wall clock.
    this.eventEpoch = Date.now() - compression * plannedWallSeconds * 1000;
    this.resetWindow();
  }

  start() {
    this.wall0 = performance.now();
    this.#timer = setInterval(() => this.#onTick(), TICK_MS);
  }

  /** Event time (epoch ms) at a wall instant (performance.now()). */
  eventTimeAt(wall) {
    return Math.round(this.eventEpoch + (wall - this.wall0) * this.compression);
  }

  /** Brings the live set to `target` runtimes (reserved 32 at a time), then launches at `launchesPerSecond`. */
  async growTo(target, launchesPerSecond) {
    // Runtimes die while the others are reserved (the ramp is minutes of event time): top up again.
    for (let round = 0; round < 5 && this.alive < 0.98 * target; round++) {
      const missing = target - this.alive;
      let next = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (next < missing) {
            next++;
            await this.#launch(performance.now(), false);
          }
        }),
      );
    }
    this.#launchRate = launchesPerSecond;
    this.#nextLaunch = performance.now() + exponential(1000 / launchesPerSecond);
    this.#armLaunches();
  }

  /**
   * Each launch leaves at its due instant, on a timer of its own: on the 20-ms tick of the events a
   * launch would leave up to 20 ms after it was due (10 ms on average) and in bursts, and its latency,
   * timed from when it was due, would carry that.
   */
  #armLaunches() {
    clearTimeout(this.#launchTimer);
    if (this.#nextLaunch === Infinity) return;
    this.#launchTimer = setTimeout(
      () => {
        const now = performance.now();
        while (this.#nextLaunch <= now) {
          const launch = this.#launch(this.#nextLaunch, true);
          this.#inflight.add(launch);
          void launch.finally(() => this.#inflight.delete(launch));
          this.#nextLaunch += exponential(1000 / this.#launchRate);
        }
        this.#armLaunches();
      },
      Math.max(0, this.#nextLaunch - performance.now()),
    );
  }

  resetWindow() {
    this.#w = {
      since: performance.now(),
      latencies: [],
      launched: 0,
      lost: 0,
      reasons: {},
      events: 0,
      heartbeats: 0,
      terminated: 0,
      maxBehindMs: 0,
    };
  }

  window() {
    return this.#w;
  }

  /** Seconds since the first message not yet consumed was sent (0 when all are). */
  secondsBehind(consumed) {
    if (consumed >= this.sent) return 0;
    let lo = 0;
    let hi = this.#sends.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#sends[mid][0] > consumed) hi = mid;
      else lo = mid + 1;
    }
    return (performance.now() - this.#sends[lo][1]) / 1000;
  }

  /** No more launches; every live runtime terminates now; resolves once everything is sent. */
  async stop() {
    this.#nextLaunch = Infinity;
    clearTimeout(this.#launchTimer);
    await Promise.all(this.#inflight);
    const at = this.eventTimeAt(performance.now());
    for (const rt of this.#runtimes) if (rt.state !== 'dead') this.#apply({ at, rt, kind: 'term' });
    clearInterval(this.#timer);
    while (this.#pending.length > 0 || this.#sending) await this.#flush();
  }

  /** What each runtime must be charged, from its events alone: running time × rate rounded up, at most the hold. */
  expectedCharges() {
    const out = new Map();
    for (const rt of this.#runtimes) {
      const charge = rt.failed ? 0n : (rt.rate * BigInt(rt.runningMs) + 3_599_999n) / 3_600_000n;
      out.set(rt.id, charge < rt.hold ? charge : rt.hold);
    }
    return out;
  }

  /** Launches that failed (the control plane sent runtime.launch_failed): charged nothing, settled or voided. */
  failedIds() {
    return new Set(this.#runtimes.filter((rt) => rt.failed).map((rt) => rt.id));
  }

  chargesByAccount(expected) {
    const out = new Map(this.accounts.map((a) => [a, 0n]));
    for (const rt of this.#runtimes) out.set(rt.account, out.get(rt.account) + expected.get(rt.id));
    return out;
  }

  async #launch(due, measured) {
    const n = this.#runtimes.length;
    const rt = {
      id: `fleet_${this.tag}_rt${n}`,
      account: this.accounts[Math.floor(Math.random() * this.accounts.length)],
      seq: 0,
      runningMs: 0,
      runningSince: null,
      state: 'launching',
      rate: 0n,
      hold: 0n,
      failed: false,
    };
    this.#runtimes.push(rt);
    const w = this.#w;
    try {
      const res = await this.call(
        'POST',
        '/v1/reservations',
        { accountId: rt.account, runtimeId: rt.id, ...ENV, minutes: this.minutes },
        {},
        this.requestTimeoutMs,
      );
      if (res.status !== 201)
        throw Object.assign(new Error(`HTTP ${res.status} ${JSON.stringify(res.body)}`), { code: `HTTP ${res.status}` });
      const now = performance.now();
      if (measured && due >= w.since) {
        w.latencies.push(now - due);
        w.launched++;
      }
      rt.rate = micros(res.body.ratePerHour);
      rt.hold = micros(res.body.reserved);
      this.#begin(rt, this.eventTimeAt(now));
    } catch (error) {
      if (measured && due >= w.since) {
        w.lost++;
        const code = error?.name === 'TimeoutError' ? 'TimeoutError' : (error?.code ?? 'error');
        w.reasons[code] = (w.reasons[code] ?? 0) + 1;
      }
      // The control plane gives up on the launch: whatever the service reserved is given back.
      rt.failed = true;
      rt.state = 'dead';
      this.#emit(rt, 'runtime.launch_failed', this.eventTimeAt(performance.now()), '{"reason":"reservation did not answer"}');
    }
  }

  #begin(rt, at) {
    rt.state = 'running';
    rt.runningSince = at;
    this.alive++;
    this.#emit(rt, 'runtime.started', at, '{}');
    const life = Math.min(exponential(this.meanLifeMs), this.maxLifeMs);
    this.#schedule({ at: at + Math.round(life), rt, kind: 'term' });
    this.#schedule({ at: at + Math.round(Math.random() * HEARTBEAT_MS), rt, kind: 'hb' });
    if (Math.random() < this.pauseShare) {
      const pauseAt = at + Math.round(Math.random() * life);
      this.#schedule({ at: pauseAt, rt, kind: 'pause' });
      const resumeAt = pauseAt + Math.round(exponential(MEAN_PAUSE_MS));
      if (resumeAt < at + life) this.#schedule({ at: resumeAt, rt, kind: 'resume' });
    }
  }

  #schedule(item) {
    const tick = Math.ceil((item.at - this.eventEpoch) / this.compression / TICK_MS);
    const list = this.#buckets.get(tick);
    if (list) list.push(item);
    else this.#buckets.set(tick, [item]);
  }

  #apply({ at, rt, kind }) {
    if (rt.state === 'dead') return;
    if (kind === 'hb') {
      this.#emit(rt, 'runtime.heartbeat', at, '{}');
      this.#w.heartbeats++;
      this.#schedule({ at: at + HEARTBEAT_MS, rt, kind: 'hb' });
    } else if (kind === 'pause' && rt.state === 'running') {
      rt.runningMs += at - rt.runningSince;
      rt.runningSince = null;
      rt.state = 'paused';
      this.#emit(rt, 'runtime.paused', at, '{}');
    } else if (kind === 'resume' && rt.state === 'paused') {
      rt.runningSince = at;
      rt.state = 'running';
      this.#emit(rt, 'runtime.resumed', at, '{}');
    } else if (kind === 'term') {
      if (rt.runningSince !== null) rt.runningMs += at - rt.runningSince;
      rt.runningSince = null;
      rt.state = 'dead';
      this.alive--;
      this.#w.terminated++;
      this.#emit(rt, 'runtime.terminated', at, '{"reason":"user"}');
    }
  }

  #emit(rt, type, at, data) {
    rt.seq++;
    this.#w.events++;
    this.#pending.push({
      key: rt.account,
      value: `{"id":"${rt.id}_${rt.seq}","type":"${type}","occurredAt":"${new Date(at).toISOString()}","accountId":"${rt.account}","runtimeId":"${rt.id}","seq":${rt.seq},"data":${data}}`,
    });
  }

  #onTick() {
    const now = performance.now();
    const current = Math.floor((now - this.wall0) / TICK_MS);
    this.#w.maxBehindMs = Math.max(this.#w.maxBehindMs, now - (this.wall0 + current * TICK_MS));
    for (; this.#tick <= current; this.#tick++) {
      const due = this.#buckets.get(this.#tick);
      if (!due) continue;
      this.#buckets.delete(this.#tick);
      due.sort((a, b) => a.at - b.at);
      for (const item of due) this.#apply(item);
    }
    if (!this.#sending) void this.#flush();
  }

  /** Sends what is pending, in slices of SEND_SLICE messages (one send at a time; a failed send is retried). */
  async #flush() {
    if (this.#sending) return this.#sending;
    if (this.#pending.length === 0) return;
    const batch = this.#pending.splice(0);
    this.#sends.push([this.sent + batch.length, performance.now()]);
    this.#sending = (async () => {
      // In slices: a backlog sent as one record batch would pass the broker's message.max.bytes.
      for (let i = 0; i < batch.length; i += SEND_SLICE) {
        const slice = batch.slice(i, i + SEND_SLICE);
        for (;;) {
          try {
            await this.producer.send({ topic: this.topic, messages: slice });
            break;
          } catch (error) {
            console.error(`fleet: send failed (${error.message}); retrying`);
            await new Promise((r) => setTimeout(r, 200));
          }
        }
        this.sent += slice.length;
      }
    })();
    try {
      await this.#sending;
    } finally {
      this.#sending = null;
    }
  }
}
