import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { rows } from 'src/common/database/transaction';
import { Clock } from 'src/infra/clock/clock';
import { JobsService } from 'src/jobs/jobs.service';

/** Once a day, and once at start: a partition is ready long before its month begins. */
const EVERY_MS = 24 * 3_600_000;

/** Months ahead of this one that have their partition. */
export const MONTHS_AHEAD = 2;

/**
 * The `event-partitions` job: `runtime_events` is partitioned by its runtime's month, and this job
 * creates the partitions of this month and the next two (`ensure_runtime_events_partition`, from the
 * migration). A month without a partition lands in the default partition, so no event waits for this
 * job; when the month's partition is created later, its rows are moved there.
 */
@Injectable()
export class EventPartitionsJob implements OnApplicationBootstrap {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly jobs: JobsService,
    private readonly clock: Clock,
    private readonly schedules: SchedulerRegistry,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.jobs.register('event-partitions', () => this.run());
    if (!this.config.cronEnabled) return;
    void this.jobs.tick('event-partitions');
    this.schedules.addInterval(
      'event-partitions',
      setInterval(() => void this.jobs.tick('event-partitions'), EVERY_MS),
    );
    this.jobs.scheduledEvery('event-partitions', EVERY_MS);
  }

  /** The months it created (with the rows moved out of the default partition) and the partitions there are. */
  async run(): Promise<{ created: { month: string; moved: number }[]; partitions: string[]; inDefault: number }> {
    const now = this.clock.now();
    const created: { month: string; moved: number }[] = [];
    for (let k = 0; k <= MONTHS_AHEAD; k++) {
      const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + k, 1)).toISOString().slice(0, 10);
      const [made] = await rows<{ moved: string | null }>(this.ds, `SELECT ensure_runtime_events_partition($1::date) AS moved`, [month]);
      if (made?.moved !== null && made?.moved !== undefined) created.push({ month: month.slice(0, 7), moved: Number(made.moved) });
    }
    const partitions = await rows<{ name: string }>(
      this.ds,
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = 'runtime_events'::regclass ORDER BY c.relname`,
    );
    const [left] = await rows<{ n: number }>(this.ds, `SELECT count(*)::int AS n FROM runtime_events_default`);
    return { created, partitions: partitions.map((p) => p.name), inDefault: left?.n ?? 0 };
  }
}
