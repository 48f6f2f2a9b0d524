import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount } from '../support/accounts';
import { GIB, pricedRateCardFile, usageEvent } from '../support/ancillary';
import { startApp, uid, type Harness } from '../support/app';
import { eventually, produce, readTopic } from '../support/kafka';

describe('ancillary usage events on the real broker', () => {
  let h: Harness;
  let admin: string;

  beforeAll(async () => {
    h = await startApp({ kafka: true, env: { RATE_CARD_FILE: pricedRateCardFile('2026-12-02T00:00:00.000Z') } });
    admin = await h.key('admin');
  });
  afterAll(() => h.close());

  const total = async (accountId: string) =>
    (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.total as string;
  const egress = (accountId: string, gib: number) => {
    const to = new Date(Date.now() - 60_000);
    return usageEvent(
      accountId,
      'egress.reported',
      to,
      { bytes: gib * GIB, from: new Date(to.getTime() - 60_000).toISOString(), to: to.toISOString() },
      { runtimeId: uid('rt') },
    );
  };

  it('charges egress published on its own topic and on the lifecycle topic, once per id, and parks poison messages of each in its dead-letter topic', async () => {
    const topics = h.config.topics;
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const own = egress(accountId, 1);
    const onLifecycle = egress(accountId, 2);
    await produce(topics.ancillary, [
      { key: accountId, value: own },
      { key: accountId, value: own },
      { key: accountId, value: { ...egress(accountId, 1), data: { bytes: 'lots' } } },
      { key: accountId, value: 'not JSON' },
    ]);
    await produce(topics.lifecycle, [
      { key: accountId, value: onLifecycle },
      { key: accountId, value: { ...egress(accountId, 1), runtimeId: undefined } },
    ]);
    // 1 GiB + 2 GiB at 0.1 credit per GiB, each once.
    await eventually(async () => (await total(accountId)) === '9.700000', 30_000, 'both reports charged');

    const ownDlq = await readTopic(topics.ancillaryDlq, 2);
    expect(ownDlq.map((m) => m.headers['x-dlq-reason']).sort()).toEqual([
      expect.stringMatching(/^invalid event: data\.bytes: /),
      expect.stringMatching(/^not JSON/),
    ]);
    const lifecycleDlq = await readTopic(topics.lifecycleDlq, 1);
    expect(lifecycleDlq.map((m) => JSON.parse(m.headers['x-dlq-findings']!))).toEqual([[expect.objectContaining({ field: 'runtimeId' })]]);
    expect(await total(accountId)).toBe('9.700000');
  });
});
