import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount } from '../support/accounts';
import { startApp, type Harness } from '../support/app';
import { EVENT_TIME_RULE } from '../../src/common/http/api-schemas';
import { ManualClock } from '../../src/infra/clock/clock';
import { membershipParser } from '../../src/members/membership-consumer';

describe('members over HTTP', () => {
  let h: Harness;
  let admin: string;

  beforeAll(async () => {
    h = await startApp();
    admin = await h.key('admin');
  });
  afterAll(() => h.close());

  it('refuses a member for a user account (400 naming the account) and changes nothing; an organization takes one', async () => {
    const user = await fundedAccount(h, admin, { kind: 'user' });
    const refused = await h.request('PUT', `/v1/accounts/${user}/members/alice`, { key: admin });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: 'DL_BILLING_REQUEST_INVALID',
      findings: [{ field: 'id', message: 'is a user account: only organization accounts have members' }],
    });
    expect((await h.request('GET', `/v1/accounts/${user}/members`, { key: admin })).body).toEqual({
      accountId: user,
      seats: 0,
      members: [],
    });

    const org = await fundedAccount(h, admin, { kind: 'organization' });
    const added = await h.request('PUT', `/v1/accounts/${org}/members/alice`, { key: admin });
    expect(added.status).toBe(200);
    expect(added.body).toMatchObject({ accountId: org, userId: 'alice', active: true, seats: 1 });
  });

  it('audits one seat added when the same new member is added by 30 requests at once', async () => {
    for (let round = 0; round < 3; round++) {
      const org = await fundedAccount(h, admin, { kind: 'organization' });
      const answers = await Promise.all(
        Array.from({ length: 30 }, () => h.request('PUT', `/v1/accounts/${org}/members/ada`, { key: admin })),
      );
      expect(answers.every((a) => a.status === 200 && a.body.seats === 1)).toBe(true);
      const audit = (await h.request('GET', `/v1/audit?accountId=${org}`, { key: admin })).body.items as { action: string }[];
      expect(audit.filter((a) => a.action === 'seat.added')).toHaveLength(1);
    }
  });

  it('keeps the seats exact when members of one account are added and removed by many requests at once', async () => {
    const org = await fundedAccount(h, admin, { kind: 'organization' });
    const users = Array.from({ length: 12 }, (_, i) => `u${i}`);
    await Promise.all(users.map((u) => h.request('PUT', `/v1/accounts/${org}/members/${u}`, { key: admin })));
    // Each user added again, and every third removed, all at once: each answer counts its own change.
    const answers = await Promise.all(
      users.flatMap((u, i) => [
        h.request('PUT', `/v1/accounts/${org}/members/${u}`, { key: admin }),
        ...(i % 3 === 0 ? [h.request('DELETE', `/v1/accounts/${org}/members/${u}`, { key: admin })] : []),
      ]),
    );
    expect(answers.every((a) => a.status === 200 && a.body.seats >= 8 && a.body.seats <= 12)).toBe(true);
    const listed = (await h.request('GET', `/v1/accounts/${org}/members`, { key: admin })).body as { members: { active: boolean }[] };
    const active = listed.members.filter((m) => m.active).length;
    // The seats an answer gives (the kept count) are the members the list shows active, and the subscription's view's.
    const last = await h.request('PUT', `/v1/accounts/${org}/members/${users[1]}`, { key: admin });
    expect(last.body.seats).toBe(active);
    expect((await h.request('GET', `/v1/accounts/${org}/subscription`, { key: admin })).body.seats).toBe(active);
  });

  it('never ends with a user account holding a member when the member is added as the account becomes a user account', async () => {
    const orgs = await Promise.all(Array.from({ length: 12 }, () => fundedAccount(h, admin, { kind: 'organization', plan: 'free' })));
    await Promise.all(
      orgs.flatMap((id) => [
        h.request('PUT', `/v1/accounts/${id}/members/m1`, { key: admin }),
        h.request('POST', '/v1/accounts', { key: admin, body: { id, kind: 'user', plan: 'free' } }),
      ]),
    );
    for (const id of orgs) {
      const [row] = (await h.ds.query(`SELECT kind FROM accounts WHERE id = $1`, [id])) as { kind: string }[];
      const kind = row?.kind;
      const seats = (await h.request('GET', `/v1/accounts/${id}/members`, { key: admin })).body.seats as number;
      // Either the member came first (the kind change was refused), or the kind change did (the member was refused).
      expect({ id, kind, seats }).toEqual(seats === 1 ? { id, kind: 'organization', seats: 1 } : { id, kind: 'user', seats: 0 });
    }
  });

  it('refuses over Kafka what the member routes refuse: a user id that could not be removed over HTTP', () => {
    const parse = membershipParser(() => new Date());
    for (const userId of ['alice@example.com', 'has space', 'x'.repeat(129)]) {
      const parsed = parse(
        Buffer.from(JSON.stringify({ id: 'e1', type: 'member.added', occurredAt: '2026-12-06T00:00:00Z', accountId: 'org_a', userId })),
      );
      expect(parsed, userId).toMatchObject({
        findings: [{ field: 'userId', message: 'must be 1-128 characters of letters, digits and _.:-' }],
      });
    }
  });

  it("refuses over Kafka a change stamped more than 24 hours ahead of the service's clock, as lifecycle events are", () => {
    const clock = new ManualClock(new Date('2031-06-01T12:00:00.000Z'));
    const parse = membershipParser(() => clock.now());
    const message = (occurredAt: string) =>
      Buffer.from(JSON.stringify({ id: 'e1', type: 'member.added', occurredAt, accountId: 'org_a', userId: 'ada' }));
    const refused = {
      reason: `invalid event: occurredAt: ${EVENT_TIME_RULE}`,
      findings: [{ field: 'occurredAt', message: EVENT_TIME_RULE }],
    };
    for (const at of ['2031-06-02T12:00:00.001Z', '2031-06-02T14:00:00+01:00', '9999-12-31T23:59:59Z', '1999-12-31T23:59:59Z']) {
      expect(parse(message(at)), at).toEqual(refused);
    }
    expect(parse(message('2031-06-02T12:00:00.000Z'))).toMatchObject({ occurredAt: new Date('2031-06-02T12:00:00.000Z') });
    // The bound moves with the clock (read at each message, not when the parser was made).
    clock.advance(1);
    expect(parse(message('2031-06-02T12:00:00.001Z'))).toMatchObject({ occurredAt: new Date('2031-06-02T12:00:00.001Z') });
  });

  it('answers 404 for the members of an account that does not exist, as every account route does', async () => {
    const res = await h.request('GET', '/v1/accounts/acc_nobody_here/members', { key: admin });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('DL_BILLING_NOT_FOUND');
  });

  it('keeps an organization with active members an organization: becoming a user account is refused until they are removed', async () => {
    const org = await fundedAccount(h, admin, { kind: 'organization', plan: 'team' });
    expect((await h.request('PUT', `/v1/accounts/${org}/members/alice`, { key: admin })).status).toBe(200);
    const body = { id: org, kind: 'user', plan: 'team' };
    const refused = await h.request('POST', '/v1/accounts', { key: admin, body });
    expect(refused.status).toBe(400);
    expect(refused.body.error.findings).toEqual([
      { field: 'kind', message: 'the organization has 1 active member(s): remove them before it becomes a user account' },
    ]);
    expect(await h.ds.query(`SELECT kind FROM accounts WHERE id = $1`, [org])).toEqual([{ kind: 'organization' }]);
    expect((await h.request('DELETE', `/v1/accounts/${org}/members/alice`, { key: admin })).status).toBe(200);
    expect((await h.request('POST', '/v1/accounts', { key: admin, body })).body).toMatchObject({ kind: 'user' });
  });
});
