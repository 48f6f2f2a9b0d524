import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lifecycle, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { launchChromium, screenshots, signInToConsole } from '../support/browser';
import { produce } from '../support/kafka';
import { sample } from '../support/metrics-sample';

/** The health page's consumer lag with a real broker: read from the broker, per topic and partition. */
describe('admin console: Kafka consumer lag', () => {
  let h: Harness;
  let browser: Browser;
  let page: Page;
  let base: string;

  beforeAll(async () => {
    h = await startApp({ kafka: true });
    const admin = await h.key('admin');
    base = await h.listen();
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1400, height: 1000 } })).newPage();
    await signInToConsole(page, base, admin);
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  const lagOf = async (): Promise<{ total: string; rows: Record<string, string>[] }> => {
    await page.goto(`${base}/admin/health`);
    const rows = await page.$$eval('#table-lag tbody tr', (trs) =>
      trs.map((tr) =>
        Object.fromEntries([...tr.querySelectorAll('td')].map((td) => [td.getAttribute('data-col') ?? '', td.textContent ?? ''])),
      ),
    );
    return { total: (await page.textContent('[data-health=consumer-lag]')) ?? '', rows };
  };

  it('shows the lag of each partition while the consumer is held, and none once it has caught up', async () => {
    const topic = h.config.topics.lifecycle;
    const account = uid('lag');
    const runtime = uid('rt');
    // The consumer is held in the database (its first read waits on this lock), so what is produced stays unconsumed.
    const blocker = new pg.Client({ connectionString: h.config.database.url });
    await blocker.connect();
    await blocker.query('BEGIN');
    await blocker.query('LOCK TABLE runtimes IN ACCESS EXCLUSIVE MODE');
    try {
      const at = Date.now();
      await produce(
        topic,
        [1, 2, 3].map((seq) => ({
          key: account,
          value: lifecycle(
            account,
            runtime,
            seq === 1 ? 'runtime.started' : 'runtime.heartbeat',
            new Date(at + seq * 1000),
            seq,
            seq === 1 ? { ...SMALL } : {},
          ),
        })),
      );
      const held = await lagOf();
      const behind = held.rows.filter((r) => r.topic === topic && r.lag !== '0');
      expect(behind, JSON.stringify(held.rows)).toHaveLength(1);
      expect(behind[0]).toMatchObject({ group: h.config.kafka!.groupId, lag: '3', end: expect.stringMatching(/^\d+$/) });
      expect(held.total).toBe('3');
      // Every partition of the service's topics is listed, the lifecycle topic's included.
      const partitions = held.rows.filter((r) => r.topic === topic).map((r) => Number(r.partition));
      expect(partitions).toEqual(partitions.map((_p, i) => i));
      await screenshots(page, 'health-kafka');
    } finally {
      await blocker.query('COMMIT');
      await blocker.end();
    }
    await expect.poll(async () => (await lagOf()).total, { timeout: 30_000, interval: 500 }).toBe('0');
    const caughtUp = (await lagOf()).rows.find((r) => r.topic === topic && r.partition !== undefined && r.end !== '0')!;
    expect(caughtUp.committed).toBe(caughtUp.end);
    // This instance's own view, in /metrics: the partition's lag after its last batch.
    const metrics = String((await h.request('GET', '/metrics')).body);
    expect(sample(metrics, 'dl_billing_kafka_consumer_lag_messages', { topic, partition: caughtUp.partition! })).toBe(0);
    expect(
      sample(metrics, 'dl_billing_kafka_consumer_last_batch_timestamp_seconds', { topic, partition: caughtUp.partition! }),
    ).toBeGreaterThan(Date.now() / 1000 - 120);
  });

  it('counts the messages on each dead-letter topic, read from the broker, whichever consumer refused them', async () => {
    const t = h.config.topics;
    const dlqOf = async (): Promise<{ total: string; rows: Record<string, string> }> => {
      await page.goto(`${base}/admin/health`);
      const rows = await page.$$eval('#table-dlq tbody tr', (trs) =>
        Object.fromEntries(
          trs.map((tr) => [tr.querySelector('td[data-col=topic]')!.textContent, tr.querySelector('td[data-col=messages]')!.textContent]),
        ),
      );
      return { total: (await page.textContent('[data-health=dead-lettered]')) ?? '', rows: rows as Record<string, string> };
    };
    const before = await dlqOf();
    expect(Object.keys(before.rows).sort()).toEqual([t.ancillaryDlq, t.lifecycleDlq, t.membershipDlq].sort());
    const count = (rows: Record<string, string>, topic: string) => Number(rows[topic]);
    // Not JSON on the lifecycle topic; a membership change without its fields.
    await produce(t.lifecycle, [{ key: uid('acc'), value: 'not json' }]);
    await produce(t.membership, [{ key: uid('acc'), value: { type: 'member.added' } }]);
    await expect
      .poll(
        async () => {
          const now = (await dlqOf()).rows;
          return [
            count(now, t.lifecycleDlq) - count(before.rows, t.lifecycleDlq),
            count(now, t.membershipDlq) - count(before.rows, t.membershipDlq),
          ];
        },
        { timeout: 30_000, interval: 500 },
      )
      .toEqual([1, 1]);
    const after = await dlqOf();
    expect(Number(after.total)).toBe(Object.values(after.rows).reduce((s, n) => s + Number(n), 0));
    expect(await page.textContent('#dead-letters')).toMatch(/This instance has dead-lettered [1-9]\d* lifecycle message/);
    const shots = await screenshots(page, 'health-dead-letters');
    expect(shots.overflow).toEqual({ 1400: 0, 420: 0 });
    expect(shots.widerThanCardOnLaptop).toEqual([]);
  });
});
