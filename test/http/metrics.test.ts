import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startApp, startAppWithKeys, uid, type Harness } from '../support/app';
import { sample } from '../support/prometheus-text';

describe('/metrics: what an on-call engineer alerts on', () => {
  let h: Harness, admin: string, cp: string;
  beforeAll(async () => ({ h, admin, cp } = await startAppWithKeys()));
  afterAll(() => h.close());

  const scrape = async (): Promise<string> => {
    const res = await h.request('GET', '/metrics');
    expect(res.status).toBe(200);
    return res.body as string;
  };

  it('counts reservations by outcome and error code, the micro-credits they hold, and labels HTTP errors by code', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '1' });
    const before = await scrape();
    const runtimeId = uid('rt');
    expect((await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL } })).status).toBe(201);
    expect((await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL } })).status).toBe(200);
    const refused = await h.request('POST', '/v1/reservations', {
      key: cp,
      body: { accountId, runtimeId: uid('rt'), ...SMALL, minutes: 60 },
    });
    expect(refused.body.error.code).toBe('DL_BILLING_INSUFFICIENT_CREDITS');
    const after = await scrape();

    const delta = (name: string, labels: Record<string, string>): number => sample(after, name, labels) - sample(before, name, labels);
    expect(delta('dl_billing_reservations_total', { outcome: 'created', code: '' })).toBe(1);
    expect(delta('dl_billing_reservations_total', { outcome: 'replayed', code: '' })).toBe(1);
    expect(delta('dl_billing_reservations_total', { outcome: 'refused', code: 'DL_BILLING_INSUFFICIENT_CREDITS' })).toBe(1);
    // 10 minutes of the small size: 0.166667 credits held (the reservation's answer says so too).
    expect(delta('dl_billing_credits_microcredits_total', { flow: 'reserved' })).toBe(166_667);
    expect(delta('dl_billing_credits_microcredits_total', { flow: 'granted' })).toBe(0);
    const errors = { method: 'POST', route: '/v1/reservations', status: '402', code: 'DL_BILLING_INSUFFICIENT_CREDITS' };
    expect(delta('dl_billing_http_request_duration_seconds_count', errors)).toBe(1);
    expect(sample(after, 'dl_billing_http_request_duration_seconds_bucket', { ...errors, le: '10' })).toBeGreaterThanOrEqual(1);
    // Open holds are the database's: at least this one, held in full.
    expect(sample(after, 'dl_billing_open_holds')).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'dl_billing_open_holds_microcredits')).toBeGreaterThanOrEqual(166_667);
    expect(sample(after, 'dl_billing_database_up')).toBe(1);
    expect(
      sample(after, 'dl_billing_db_pool_connections', { state: 'idle' }) +
        sample(after, 'dl_billing_db_pool_connections', { state: 'in_use' }),
    ).toBeGreaterThan(0);
    // Nothing waits for a connection here: the scrape's own database read is not counted as waiting.
    expect(sample(after, 'dl_billing_db_pool_waiting')).toBe(0);
    // Bounded labels: no account or runtime id anywhere.
    expect(after).not.toContain(accountId);
    expect(after).not.toContain(runtimeId);
  });

  it('counts and echoes the request id of a URL refused before any route (the API and the console alike)', async () => {
    const before = await scrape();
    for (const url of ['/v1/%ZZ', '/admin/%ZZ']) {
      const res = await h.app.inject({ method: 'GET', url, headers: { 'x-request-id': 'req-bad-url' } });
      expect(res.statusCode, url).toBe(400);
      expect(res.headers['x-request-id'], url).toBe('req-bad-url');
    }
    const after = await scrape();
    const refused = { method: 'GET', route: 'unmatched', status: '400', code: 'DL_BILLING_REQUEST_INVALID' };
    const delta =
      sample(after, 'dl_billing_http_request_duration_seconds_count', refused) -
      sample(before, 'dl_billing_http_request_duration_seconds_count', refused);
    expect(delta).toBe(2);
  });

  it('counts every micro-credit flow as the wallet sees it: granted, reserved (extensions too), charged and released', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '1' });
    const wallet = async (): Promise<{ total: string; held: string }> =>
      (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body as { total: string; held: string };
    const micro = (credits: string): number => Math.round(Number(credits) * 1e6);
    const before = await scrape();
    const granted = await h.request('POST', `/v1/admin/accounts/${accountId}/grants`, {
      key: admin,
      body: { credits: '2', reason: 'metrics test' },
      headers: { 'idempotency-key': uid('grant') },
    });
    expect(granted.status).toBe(201);
    const runtimeId = uid('rt');
    expect((await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes: 10 } })).status).toBe(
      201,
    );
    const extended = await h.request('POST', `/v1/reservations/${runtimeId}/extend`, {
      key: cp,
      body: { minutes: 20 },
      headers: { 'idempotency-key': uid('x') },
    });
    expect(extended.body).toMatchObject({ minutes: 30, reserved: '0.500000' });
    const held = await scrape();
    const t0 = new Date(Date.now() - 600_000);
    const events = await h.request('POST', '/v1/events', {
      key: cp,
      body: {
        events: [
          lifecycle(accountId, runtimeId, 'runtime.started', t0, 1),
          lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(t0.getTime() + 300_000), 2, { reason: 'expired' }),
        ],
      },
    });
    expect(events.status, JSON.stringify(events.body)).toBeLessThan(300);
    const after = await scrape();
    const settled = await wallet();
    expect(settled.held).toBe('0.000000');

    const delta = (from: string, to: string, flow: string): number =>
      sample(to, 'dl_billing_credits_microcredits_total', { flow }) - sample(from, 'dl_billing_credits_microcredits_total', { flow });
    expect(delta(before, held, 'granted')).toBe(2_000_000);
    // 10 minutes at 1 credit/h, then 20 more: the extension is reserved too.
    expect(delta(before, held, 'reserved')).toBe(500_000);
    // What the runtime used is charged, the rest of the hold released; the wallet lost the charge.
    const charged = delta(held, after, 'charged');
    expect(charged).toBeGreaterThan(0);
    expect(charged + delta(held, after, 'released')).toBe(500_000);
    expect(micro('3') - micro(settled.total)).toBe(charged);
  });

  it('records a job run: its last start and success, duration and what a reconcile found', async () => {
    const started = Date.now() / 1000;
    const run = await h.request('POST', '/v1/admin/jobs/ledger-reconcile/run', { key: admin });
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ job: 'ledger-reconcile', ran: true, result: { problems: 0, discrepancies: [] } });
    const text = await scrape();
    const job = { job_name: 'ledger-reconcile' };
    expect(sample(text, 'dl_billing_job_last_start_timestamp_seconds', job)).toBeGreaterThanOrEqual(Math.floor(started) - 1);
    expect(sample(text, 'dl_billing_job_last_success_timestamp_seconds', job)).toBeGreaterThanOrEqual(Math.floor(started) - 1);
    expect(sample(text, 'dl_billing_job_last_problems', job)).toBe(0);
    expect(sample(text, 'dl_billing_job_runs_total', { ...job, result: 'succeeded' })).toBe(1);
    expect(sample(text, 'dl_billing_job_duration_seconds_count', job)).toBe(1);
  });

  it('documents every metric it exports and gives every shipped alert a runbook (docs/operations.md)', async () => {
    const text = await scrape();
    const docs = readFileSync('docs/operations.md', 'utf8');
    const own = [...text.matchAll(/^# TYPE (dl_billing_\S+) /gm)]
      .map((m) => m[1]!)
      .filter((name) => !/^dl_billing_(process|nodejs)_/.test(name));
    expect(own.length).toBeGreaterThan(25);
    for (const name of own) expect(docs.includes(`\`${name}\``), `docs/operations.md lists ${name}`).toBe(true);
    const alerts = [...readFileSync('ops/prometheus/alerts.yml', 'utf8').matchAll(/- alert: (\w+)/g)].map((m) => m[1]!);
    expect(alerts.length).toBeGreaterThan(10);
    for (const alert of alerts) {
      expect(docs, `a runbook for ${alert}`).toContain(`\n### ${alert}\n`);
      expect(readFileSync('ops/prometheus/alerts.yml', 'utf8')).toContain(`runbook: "docs/operations.md#${alert.toLowerCase()}"`);
    }
  });

  it('exports every metric the shipped alert rules and dashboard use', async () => {
    const text = await scrape();
    const exported = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
    for (const file of ['ops/prometheus/alerts.yml', 'ops/grafana/dl-billing.json']) {
      const used = new Set(
        [...readFileSync(file, 'utf8').matchAll(/dl_billing_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|count|sum)$/, '')),
      );
      expect(used.size).toBeGreaterThan(5);
      for (const name of used) expect(exported.has(name), `${file} uses ${name}`).toBe(true);
    }
  });
});

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe('/metrics on a listener of its own (METRICS_PORT, METRICS_HOST)', () => {
  let h: Harness;
  let port: number;
  const token = 'metrics-listener-token-0123456789abcdef';

  beforeAll(async () => {
    port = await freePort();
    h = await startApp({ env: { METRICS_PORT: String(port), METRICS_HOST: '127.0.0.1', METRICS_BEARER_TOKEN: token } });
  });
  afterAll(() => h.close());

  it('serves the metrics there alone, behind the bearer, and answers 404 for them on the API port', async () => {
    const url = `http://127.0.0.1:${port}/metrics`;
    const scraped = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toContain('text/plain');
    expect(await scraped.text()).toContain('# TYPE');
    const anonymous = await fetch(url);
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe('DL_BILLING_UNAUTHENTICATED');
    const elsewhere = await fetch(`http://127.0.0.1:${port}/v1/accounts/x/wallet`, { headers: { authorization: `Bearer ${token}` } });
    expect([elsewhere.status, ((await elsewhere.json()) as { error: { code: string } }).error.code]).toEqual([404, 'DL_BILLING_NOT_FOUND']);
    const onApi = await h.request('GET', '/metrics', { headers: { authorization: `Bearer ${token}` } });
    expect([onApi.status, onApi.body.error.code]).toEqual([404, 'DL_BILLING_NOT_FOUND']);
  });

  it('stops listening when the service closes', async () => {
    const otherPort = await freePort();
    const other = await startApp({ env: { METRICS_PORT: String(otherPort) } });
    const otherUrl = `http://127.0.0.1:${otherPort}/metrics`;
    expect((await fetch(otherUrl)).status).toBe(200);
    await other.close();
    await expect(fetch(otherUrl)).rejects.toThrow();
  });
});
