import { Controller, Get, Headers, Inject, Query, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { Public } from 'src/common/auth/auth.decorators';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { parseQueryOrThrow } from 'src/common/http/zod-validation.pipe';
import { Metrics } from 'src/health/metrics';
import { MessageBus } from 'src/infra/kafka/message-bus';
import { JOB_NAMES, JobsService } from 'src/jobs/jobs.service';
import { OutboxRelayService } from 'src/messaging/outbox-relay.service';
import { StripeEventsService } from 'src/stripe/stripe-events.service';
import { AdminAuth } from './admin-auth';
import { signedFlash } from './admin-session';
import { duration, esc, hidden, shell, table } from './render';
import { ConsoleErrorFilter } from './console-error.filter';

/** System health for operators: what waits to be published, what is not yet consumed, what failed, when each job last ran. */
@Controller('admin/health')
@UseFilters(ConsoleErrorFilter)
@Public()
export class AdminHealthController {
  constructor(
    private readonly auth: AdminAuth,
    private readonly outbox: OutboxRelayService,
    private readonly jobs: JobsService,
    private readonly stripe: StripeEventsService,
    private readonly bus: MessageBus,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The broker's answer within 3 s, so an unreachable broker slows the page down by no more. */
  private async fromBroker<T>(read: () => Promise<T[] | null>): Promise<T[] | null | { error: string }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('no answer within 3 s')), 3_000)));
    try {
      return await Promise.race([read(), timeout]);
    } catch (error) {
      return { error: error instanceof Error ? error.message : String(error) };
    } finally {
      clearTimeout(timer);
    }
  }

  @Get()
  show(
    @Query() query: unknown,
    @Headers('cookie') cookies: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    return this.auth.page(reply, cookies, async (viewer) => {
      const q = parseQueryOrThrow(z.strictObject({ done: z.string().max(300).optional(), sig: z.string().max(100).optional() }), query);
      const { topics } = this.config;
      const dlqTopics = this.config.kafka ? [topics.lifecycleDlq, topics.membershipDlq, topics.ancillaryDlq] : [];
      const [backlog, runs, webhooks, deadLettered, lag, dlq] = await Promise.all([
        this.outbox.backlog(),
        this.jobs.lastRuns(),
        this.stripe.recentWebhooks(20),
        this.metrics.deadLettered.get(),
        this.fromBroker(() => this.bus.consumerLag()),
        this.fromBroker(() => this.bus.topicSizes(dlqTopics)),
      ]);
      const pending = backlog.reduce((s, b) => s + b.pending, 0);
      const oldest = backlog.length > 0 ? backlog.reduce((o, b) => (b.oldestAt < o.oldestAt ? b : o)) : null;
      const age = oldest?.oldestAgeSeconds ?? 0;
      const kafka = this.bus.health();
      const deadHere = deadLettered.values.reduce((s, v) => s + v.value, 0);
      const failedJobs = runs.filter((r) => r.outcome === 'failed').length;
      const failedHooks = webhooks.filter((w) => w.outcome === 'failed').length;
      const names = [...new Set([...JOB_NAMES, ...this.jobs.names()])].sort();
      const jobRows = names.map((job) => {
        const run = runs.find((r) => r.job === job);
        return {
          job,
          trigger: run?.trigger ?? null,
          startedAt: run?.startedAt ?? null,
          finishedAt: run?.finishedAt ?? null,
          outcome: run?.outcome ?? 'never run',
          error: run?.error ?? null,
          result: run?.result === undefined || run?.result === null ? null : JSON.stringify(run.result),
        };
      });
      const flash = signedFlash(viewer.csrf, '/admin/health', q.done, q.sig);
      const body = `${flash ? `<p class="flash" role="status">${esc(flash)}</p>` : ''}
<section id="summary"><h2>System health</h2><div class="totals">
<div><b data-health="outbox-pending">${pending}</b>outbox messages waiting</div>
<div><b data-health="outbox-age">${oldest ? esc(duration(age)) : '—'}</b>oldest waiting for</div>
<div><b data-health="dead-lettered">${dlq === null ? 'not applicable' : 'error' in dlq ? 'unknown' : dlq.reduce((s, t) => s + t.messages, 0)}</b>messages on the dead-letter topics</div>
<div><b class="${failedJobs ? 'error' : 'ok'}">${failedJobs}</b>jobs whose last run failed</div>
<div><b class="${failedHooks ? 'error' : 'ok'}">${failedHooks}</b>failed Stripe events among the last 20</div>
<div><b data-health="consumer-lag">${lag === null ? 'not applicable' : 'error' in lag ? 'unknown' : lag.reduce((s, l) => s + l.lag, 0)}</b>messages behind (Kafka consumer lag)</div>
<div><b class="${kafka.ok ? 'ok' : 'error'}">${!this.bus.enabled ? 'off' : kafka.ok ? 'up' : 'down'}</b>Kafka: ${esc(kafka.detail)}</div></div>
</section>
<section id="dead-letters"><h2>Dead-lettered messages</h2>${
        dlq === null
          ? '<p>Not applicable: Kafka is not configured, events come over HTTP and a bad one is refused with its 400; nothing is dead-lettered.</p>'
          : 'error' in dlq
            ? `<p class="error">Could not read the dead-letter topics from Kafka: ${esc(dlq.error)}</p>`
            : table(
                'table-dlq',
                'Messages refused by the consumers, kept on the dead-letter topics (read from the broker, all instances)',
                [{ key: 'topic' }, { key: 'messages', num: true }],
                dlq as unknown as Record<string, unknown>[],
                { stack: true },
              )
      }<p class="none">Each dead letter is the refused message as received, its reason in the <code>x-dlq-reason</code> header. This instance has dead-lettered ${deadHere} lifecycle message${deadHere === 1 ? '' : 's'} since it started.</p></section>
<section id="lag"><h2>Kafka consumer lag</h2>${
        lag === null
          ? '<p>Not applicable: Kafka is not configured (<code>KAFKA_BROKERS</code> is unset), lifecycle events come over HTTP and nothing is consumed.</p>'
          : 'error' in lag
            ? `<p class="error">Could not read the consumer groups' offsets from Kafka: ${esc(lag.error)}</p>`
            : table(
                'table-lag',
                "This service's consumer groups: committed offset and end of each partition, read from the broker",
                [
                  { key: 'group' },
                  { key: 'topic' },
                  { key: 'partition', num: true },
                  { key: 'committed', num: true, value: (l) => (l.committed === null ? 'none yet' : String(l.committed)) },
                  { key: 'end', label: 'End offset', num: true },
                  { key: 'lag', label: 'Lag (messages)', num: true },
                ],
                lag as unknown as Record<string, unknown>[],
                { empty: 'No partition assigned yet.', stack: true },
              )
      }</section>
<section id="outbox"><h2>Outbox backlog</h2>${table('table-outbox', 'Messages written but not yet published, by topic', [{ key: 'topic' }, { key: 'pending', num: true }, { key: 'oldestAt', label: 'Oldest since', format: 'when' }], backlog, { empty: 'Nothing waiting: every message is published.' })}</section>
<section id="jobs"><h2>Scheduled jobs</h2>${table(
        'table-jobs',
        'The last run of each job',
        [
          { key: 'job' },
          {
            key: 'outcome',
            format: 'html',
            value: (r) =>
              `<span class="badge ${r.outcome === 'succeeded' ? 'good' : r.outcome === 'failed' ? 'bad' : ''}">${esc(String(r.outcome))}</span>`,
          },
          { key: 'startedAt', label: 'Started', format: 'when' },
          { key: 'finishedAt', label: 'Finished', format: 'when' },
          { key: 'trigger', label: 'Started by' },
          {
            key: 'error',
            label: 'Result or error',
            format: 'html',
            value: (r) =>
              r.error
                ? `<span class="error">${esc(String(r.error))}</span>`
                : r.result
                  ? `<pre>${esc(String(r.result).slice(0, 300))}</pre>`
                  : null,
          },
          {
            key: 'act',
            label: 'Action',
            format: 'html',
            value: (r) =>
              viewer.canAct
                ? `<form method="post" action="/admin/jobs/${encodeURIComponent(String(r.job))}/run" class="inline">${hidden({ csrf: viewer.csrf })}<button type="submit" aria-label="Run ${esc(String(r.job))} now">Run now…</button></form>`
                : '—',
          },
        ],
        jobRows,
        { stack: true },
      )}</section>
<section id="webhooks"><h2>Recent Stripe webhooks</h2>${table(
        'table-webhooks',
        'The last 20 Stripe events received, newest first',
        [
          { key: 'receivedAt', label: 'Received', format: 'when' },
          { key: 'type' },
          { key: 'eventId', label: 'Event' },
          {
            key: 'outcome',
            format: 'html',
            value: (w) =>
              `<span class="badge ${w.outcome === 'applied' ? 'good' : w.outcome === 'failed' ? 'bad' : ''}">${esc(String(w.outcome))}</span>`,
          },
          {
            key: 'accountId',
            label: 'Account',
            format: 'html',
            value: (w) =>
              w.accountId ? `<a href="/admin/accounts/${encodeURIComponent(String(w.accountId))}">${esc(String(w.accountId))}</a>` : null,
          },
          { key: 'deliveries', num: true },
          { key: 'error' },
        ],
        webhooks,
        { empty: 'No Stripe event received yet.', stack: true },
      )}</section>`;
      return shell('System health', viewer, 'health', body);
    });
  }
}
