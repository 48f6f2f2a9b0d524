import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lifecycle } from '../support/accounts';
import { uid } from '../support/app';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';
import { freePort, startService, type ServiceProcess } from '../support/service-process';
import { serviceFetch } from '../support/openapi-check';

const ADMIN_KEY = 'prometheus-test-admin-key-0123456789';
const RULES = resolve('ops/prometheus/alerts.yml');

/** The shipped rule, with its `for:` shortened: a test cannot wait five minutes. */
function rulesWithoutWaiting(): string {
  const shipped = readFileSync(RULES, 'utf8');
  const rule = /(- alert: DlBillingOutboxStale\n\s+expr: [^\n]+\n\s+for: )5m/;
  if (!rule.test(shipped)) throw new Error(`${RULES}: DlBillingOutboxStale with "for: 5m" not found`);
  return shipped.replace(rule, '$10s');
}

interface AlertsAnswer {
  data: { alerts: { labels: Record<string, string>; state: string }[] };
}

describe('a real Prometheus scrapes the service and fires the alerts on provoked conditions', () => {
  let db: FreshDatabase;
  let service: ServiceProcess;
  let prometheus: ChildProcess | undefined;
  let prometheusLog = '';
  let promUrl = '';
  const dir = mkdtempSync(join(tmpdir(), 'billing-prometheus-'));

  beforeAll(async () => {
    const found = spawnSync('prometheus', ['--version']);
    if (found.error) {
      throw new Error(
        "the `prometheus` binary is not on PATH: install Debian's prometheus package (apt-get install prometheus); this test needs a real server",
      );
    }
    db = await freshDatabase('prometheus');
    // No KAFKA_BROKERS: the service takes events over HTTP, and nothing relays its outbox — the
    // condition the alert exists for.
    service = await startService({ DATABASE_URL: db.url, KAFKA_BROKERS: '', BILLING_ADMIN_API_KEY: ADMIN_KEY, LOG_LEVEL: 'warn' });
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    writeFileSync(join(dir, 'alerts.yml'), rulesWithoutWaiting());
    writeFileSync(
      join(dir, 'prometheus.yml'),
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        'rule_files: [alerts.yml]',
        'scrape_configs:',
        '  - job_name: dl-billing',
        `    static_configs: [{ targets: ['127.0.0.1:${service.port}'] }]`,
        '',
      ].join('\n'),
    );
    prometheus = spawn(
      'prometheus',
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.stdout?.on('data', (d: Buffer) => (prometheusLog += d.toString()));
    prometheus.stderr?.on('data', (d: Buffer) => (prometheusLog += d.toString()));
  });

  afterAll(async () => {
    prometheus?.kill('SIGTERM');
    await service?.stop();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function query(promql: string): Promise<number | null> {
    const answer = (await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(promql)}`).then((r) => r.json())) as {
      data?: { result: { value: [number, string] }[] };
    };
    const value = answer.data?.result[0]?.value[1];
    return value === undefined ? null : Number(value);
  }

  async function alertState(name: string): Promise<string> {
    const answer = (await fetch(`${promUrl}/api/v1/alerts`).then((r) => r.json())) as AlertsAnswer;
    return answer.data.alerts.find((a) => a.labels.alertname === name)?.state ?? 'inactive';
  }
  const outboxAlert = (): Promise<string> => alertState('DlBillingOutboxStale');

  async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, ms = 60_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await read().catch(() => undefined as T);
      if (value !== undefined && done(value)) return value;
      if (Date.now() > deadline) {
        throw new Error(`${what}: still ${JSON.stringify(value)} after ${ms} ms\nprometheus:\n${prometheusLog.slice(-3000)}`);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  it('scrapes the service, stays quiet while the outbox is empty, fires once a message waits too long', async () => {
    await until(
      'the scrape target',
      () => query('up{job="dl-billing"}'),
      (v) => v === 1,
    );
    await until(
      'the outbox gauge',
      () => query('dl_billing_outbox_unsent_messages'),
      (v) => v === 0,
    );
    expect(await query('dl_billing_database_up')).toBe(1);
    expect(await outboxAlert()).toBe('inactive');

    // A runtime reports without a reservation, on an account with nothing to reserve with: the
    // service tells it to terminate, through the outbox that nothing relays.
    const admin = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
    const base = `http://127.0.0.1:${service.port}`;
    const accountId = uid('acc');
    const created = await serviceFetch(`${base}/v1/accounts`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ id: accountId, kind: 'user', plan: 'free', name: 'prometheus test' }),
    });
    expect(created.status).toBe(201);
    const events = await serviceFetch(`${base}/v1/events`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ events: [lifecycle(accountId, uid('rt'), 'runtime.started', new Date(), 1)] }),
    });
    expect(events.status).toBeLessThan(300);
    await until(
      'the unsent outbox messages',
      () => query('dl_billing_outbox_unsent_messages'),
      (v) => v !== null && v >= 1,
    );

    // The message has waited past the rule's 300 s (as it would, Kafka being absent, ten minutes later).
    await db.ds.query(`UPDATE outbox SET created_at = now() - interval '10 minutes' WHERE published_at IS NULL`);
    const age = await until(
      'the oldest message age',
      () => query('dl_billing_outbox_oldest_unsent_age_seconds'),
      (v) => v !== null && v > 300,
    );
    expect(age).toBeLessThan(700);
    await until(
      'the DlBillingOutboxStale alert',
      () => outboxAlert(),
      (state) => state === 'firing',
    );
  });

  it('keeps the job of each job metric beside the scrape job, and fires DlBillingLedgerDiscrepancy when the reconcile finds one', async () => {
    const admin = { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' };
    const base = `http://127.0.0.1:${service.port}`;
    const accountId = uid('acc');
    const created = await fetch(`${base}/v1/accounts`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ id: accountId, kind: 'user', plan: 'enterprise', name: 'prometheus reconcile' }),
    });
    expect(created.status).toBe(201);
    const granted = await fetch(`${base}/v1/admin/accounts/${accountId}/grants`, {
      method: 'POST',
      headers: { ...admin, 'idempotency-key': uid('grant') },
      body: JSON.stringify({ credits: '5', reason: 'prometheus test' }),
    });
    expect(granted.status).toBe(201);
    const reconcile = async (): Promise<{ result: { problems: number } }> => {
      const run = await fetch(`${base}/v1/admin/jobs/ledger-reconcile/run`, {
        method: 'POST',
        headers: { authorization: admin.authorization },
      });
      expect(run.status).toBe(200);
      return (await run.json()) as { result: { problems: number } };
    };
    expect((await reconcile()).result.problems).toBe(0);
    // Prometheus names its scrape job `job`: the service's job label must not be that one, or
    // Prometheus renames it (exported_job) and every per-job rule silently matches nothing.
    await until(
      'the reconcile job, by its own label, on the dl-billing scrape',
      () => query('count(dl_billing_job_last_success_timestamp_seconds{job="dl-billing", job_name="ledger-reconcile"})'),
      (v) => v === 1,
    );
    expect(await query('dl_billing_job_last_problems{job_name="ledger-reconcile"}')).toBe(0);

    // Every shipped rule evaluates without error, and every dashboard query is valid PromQL.
    const rules = (await fetch(`${promUrl}/api/v1/rules`).then((r) => r.json())) as {
      data: { groups: { rules: { name: string; health: string; lastError?: string }[] }[] };
    };
    const evaluated = rules.data.groups.flatMap((g) => g.rules);
    expect(evaluated.length).toBeGreaterThan(10);
    for (const rule of evaluated) expect([rule.name, rule.health, rule.lastError ?? '']).toEqual([rule.name, 'ok', '']);
    const dashboard = JSON.parse(readFileSync('ops/grafana/dl-billing.json', 'utf8')) as { panels: { targets?: { expr: string }[] }[] };
    const exprs = dashboard.panels
      .flatMap((p) => p.targets ?? [])
      .map((t) => t.expr.replaceAll('$__rate_interval', '1m').replaceAll('$instance', '.*'));
    expect(exprs.length).toBeGreaterThan(10);
    for (const expr of exprs) {
      const answer = (await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`).then((r) => r.json())) as {
        status: string;
        error?: string;
      };
      expect([expr, answer.status, answer.error ?? '']).toEqual([expr, 'success', '']);
    }
    // The per-job panels show each job, not one line for the scrape job.
    expect(await query('count(max by (job_name) (dl_billing_job_last_success_timestamp_seconds))')).toBeGreaterThanOrEqual(1);
    expect(await query('count(max by (job_name) (dl_billing_job_last_success_timestamp_seconds{job_name=""}))')).toBeNull();
    expect(await alertState('DlBillingLedgerDiscrepancy')).toBe('inactive');

    // A stored balance changed behind the ledger's back: what the reconcile exists to find.
    await db.ds.query('ALTER TABLE wallets DISABLE TRIGGER USER');
    await db.ds.query('UPDATE wallets SET grants_balance = grants_balance + 1, issued = issued - 1 WHERE account_id = $1', [accountId]);
    await db.ds.query('ALTER TABLE wallets ENABLE TRIGGER USER');
    expect((await reconcile()).result.problems).toBeGreaterThanOrEqual(1);
    await until(
      'the DlBillingLedgerDiscrepancy alert',
      () => alertState('DlBillingLedgerDiscrepancy'),
      (state) => state === 'firing',
    );
  });
});
