import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount } from '../support/accounts';
import { startApp, type Harness } from '../support/app';

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
});
