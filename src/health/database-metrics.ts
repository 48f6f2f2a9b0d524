import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Gauge } from 'prom-client';
import { DataSource } from 'typeorm';
import { poolOf } from 'src/common/database/pipelined-transaction';
import { withQueryBound } from 'src/common/database/query-bounds';
import { Metrics } from './metrics';

/** A scrape waits at most this long for the database; then the gauges say the database is down. */
const QUERY_TIMEOUT_MS = 2_000;

interface Snapshot {
  up: boolean;
  outboxUnsent: number;
  outboxOldestAge: number;
  openHolds: number;
  heldMicrocredits: number;
  jobs: {
    job: string;
    started: number | null;
    succeeded: number | null;
    failed: number | null;
    duration_ms: number | null;
    problems: number | null;
    failures: number;
  }[];
}

const SNAPSHOT_SQL = `
SELECT (SELECT count(*) FROM outbox WHERE published_at IS NULL)::int AS "outboxUnsent",
  coalesce((SELECT extract(epoch FROM now() - min(created_at)) FROM outbox WHERE published_at IS NULL), 0)::float8 AS "outboxOldestAge",
  (SELECT count(*) FROM holds WHERE status = 'reserved')::int AS "openHolds",
  (SELECT coalesce(sum(amount - settled_amount - released_amount), 0) FROM holds WHERE status = 'reserved')::float8 AS "heldMicrocredits",
  coalesce((SELECT json_agg(json_build_object('job', job, 'started', extract(epoch FROM last_started_at),
    'succeeded', extract(epoch FROM last_succeeded_at), 'failed', extract(epoch FROM last_failed_at),
    'duration_ms', last_duration_ms, 'problems', last_problems, 'failures', failures)) FROM job_runs), '[]') AS jobs`;

/**
 * The gauges the database knows for the whole fleet, read when Prometheus scrapes: the outbox
 * backlog (in HTTP-only mode nothing relays it), open holds, each job's last run, and this
 * instance's connection pool. Every instance reports the same database values: aggregate with max.
 */
@Injectable()
export class DatabaseMetrics implements OnModuleInit {
  /** The read in flight: every gauge of a scrape, and scrapes at the same moment, share one query. */
  private pending?: Promise<Snapshot>;
  /** The last snapshot read, shown (with up 0) while the database does not answer. */
  private last?: Snapshot;

  constructor(
    private readonly metrics: Metrics,
    @InjectDataSource() private readonly ds: DataSource,
  ) {}

  onModuleInit(): void {
    const registers = [this.metrics.registry];
    // The pool's gauges first: a scrape collects in registration order, and the database gauges' own
    // query would otherwise be counted as waiting for a connection (it is queued until the next tick).
    const pool = (): { totalCount: number; idleCount: number; waitingCount: number } | undefined =>
      this.ds.isInitialized ? poolOf(this.ds) : undefined;
    new Gauge({
      name: 'dl_billing_db_pool_connections',
      help: "Connections of this instance's pool, by state (in_use, idle)",
      labelNames: ['state'],
      registers,
      collect() {
        const p = pool();
        this.set({ state: 'in_use' }, p ? p.totalCount - p.idleCount : 0);
        this.set({ state: 'idle' }, p?.idleCount ?? 0);
      },
    });
    new Gauge({
      name: 'dl_billing_db_pool_waiting',
      help: 'Queries of this instance waiting for a pool connection',
      registers,
      collect() {
        this.set(pool()?.waitingCount ?? 0);
      },
    });
    const gauge = (name: string, help: string, labelNames: string[], fill: (g: Gauge, s: Snapshot) => void): void => {
      const snapshot = (): Promise<Snapshot> => this.snapshot();
      new Gauge({
        name,
        help,
        labelNames,
        registers,
        async collect() {
          this.reset();
          fill(this, await snapshot());
        },
      });
    };
    gauge('dl_billing_database_up', '1 when the last scrape could read the database', [], (g, s) => g.set(s.up ? 1 : 0));
    gauge('dl_billing_outbox_unsent_messages', 'Outbox messages not yet published to Kafka', [], (g, s) => g.set(s.outboxUnsent));
    gauge('dl_billing_outbox_oldest_unsent_age_seconds', 'Age of the oldest unpublished outbox message (0 when none)', [], (g, s) =>
      g.set(s.outboxOldestAge),
    );
    gauge('dl_billing_open_holds', 'Holds reserved and not yet settled, voided or expired', [], (g, s) => g.set(s.openHolds));
    gauge('dl_billing_open_holds_microcredits', 'Micro-credits held by open holds', [], (g, s) => g.set(s.heldMicrocredits));
    const perJob = (name: string, help: string, value: (j: Snapshot['jobs'][number]) => number | null): void =>
      gauge(name, help, ['job_name'], (g, s) => {
        for (const j of s.jobs) {
          const v = value(j);
          if (v !== null) g.set({ job_name: j.job }, v);
        }
      });
    perJob('dl_billing_job_last_start_timestamp_seconds', 'When the job last started (any instance)', (j) => j.started);
    perJob('dl_billing_job_last_success_timestamp_seconds', 'When the job last succeeded (any instance)', (j) => j.succeeded);
    perJob('dl_billing_job_last_failure_timestamp_seconds', 'When the job last failed (any instance)', (j) => j.failed);
    perJob('dl_billing_job_last_duration_seconds', "Duration of the job's last run (any instance)", (j) =>
      j.duration_ms === null ? null : j.duration_ms / 1000,
    );
    perJob(
      'dl_billing_job_last_problems',
      "What the job's last successful run found wrong (ledger-reconcile: discrepancies)",
      (j) => j.problems,
    );
    perJob('dl_billing_job_failures', 'Failed runs of the job since it was first run (any instance)', (j) => Number(j.failures));
  }

  private snapshot(): Promise<Snapshot> {
    this.pending ??= this.read().finally(() => setImmediate(() => (this.pending = undefined)));
    return this.pending;
  }

  private async read(): Promise<Snapshot> {
    // Unreachable, the database's gauges keep the last values read (up says 0): a 0 would say no hold is
    // open and no message waits, and job series gone would fire the alerts on late jobs.
    const down: Snapshot = this.last
      ? { ...this.last, up: false }
      : { up: false, outboxUnsent: 0, outboxOldestAge: 0, openHolds: 0, heldMicrocredits: 0, jobs: [] };
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), QUERY_TIMEOUT_MS)));
    try {
      const found = await Promise.race([
        withQueryBound(QUERY_TIMEOUT_MS, () => this.ds.query(SNAPSHOT_SQL) as Promise<Omit<Snapshot, 'up'>[]>),
        timeout,
      ]);
      const row = found?.[0];
      if (!row) return down;
      this.last = { up: true, ...row };
      return this.last;
    } catch {
      return down;
    } finally {
      clearTimeout(timer);
    }
  }
}
