import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboxRelayService } from '../../src/messaging/outbox-relay.service';
import { startAppOnFreshDatabase, type Harness } from '../support/app';

/** The outbox keeps published messages a week, then deletes them; a message not yet sent stays. A database of its own: it deletes by age over the whole table. */
describe('outbox retention', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startAppOnFreshDatabase('outbox_prune');
  });
  afterAll(() => h.close());

  it('deletes messages published over a week ago, in batches, and keeps the recent and the unsent ones', async () => {
    await h.ds.query(
      `INSERT INTO outbox (topic, key, payload, created_at, published_at)
       SELECT 'billing.notifications.v1', 'old_' || i, '{}'::jsonb, now() - interval '9 days', now() - interval '8 days'
       FROM generate_series(1, 12000) AS i`,
    );
    await h.ds.query(
      `INSERT INTO outbox (topic, key, payload, created_at, published_at) VALUES
         ('billing.commands.v1', 'unsent', '{}'::jsonb, now() - interval '9 days', NULL),
         ('billing.commands.v1', 'recent', '{}'::jsonb, now() - interval '2 days', now() - interval '2 days')`,
    );
    const relay = h.app.get(OutboxRelayService);
    expect(await relay.prunePublished()).toBe(12000);
    const left: { key: string }[] = await h.ds.query(`SELECT key FROM outbox ORDER BY id`);
    expect(left.map((r) => r.key)).toEqual(['unsent', 'recent']);
    expect(await relay.prunePublished()).toBe(0);
  });
});
