import type { Schemas } from '../../clients/typescript/src/index';
import type { Harness } from './app';
import { uid } from './app';

/** Creates an account through the API and grants it credits (non-expiring admin grant). */
export async function fundedAccount(
  h: Harness,
  adminKey: string,
  opts: { credits?: string; plan?: 'free' | 'team' | 'enterprise'; kind?: 'user' | 'organization'; id?: string } = {},
): Promise<string> {
  const id = opts.id ?? uid('acc');
  const created = await h.request('POST', '/v1/accounts', {
    key: adminKey,
    body: { id, kind: opts.kind ?? 'user', plan: opts.plan ?? 'enterprise', name: `test ${id}` },
  });
  if (created.status !== 201 && created.status !== 200) throw new Error(`account: ${created.status} ${JSON.stringify(created.body)}`);
  if (opts.credits && opts.credits !== '0') {
    const granted = await h.request('POST', `/v1/admin/accounts/${id}/grants`, {
      key: adminKey,
      body: { credits: opts.credits, reason: 'test funds' },
      headers: { 'idempotency-key': uid('grant') },
    });
    if (granted.status !== 201) throw new Error(`grant: ${granted.status} ${JSON.stringify(granted.body)}`);
  }
  return id;
}

export const SMALL = { variant: 'datalayer', environment: { name: 'python-simple', sizeClass: 'small' } } as const;

/** A lifecycle event, typed by the OpenAPI document (the typed client takes it as it is). */
export function lifecycle(
  accountId: string,
  runtimeId: string,
  type: Schemas['LifecycleEvent']['type'],
  at: Date,
  seq: number,
  data: Record<string, unknown> = {},
): Schemas['LifecycleEvent'] {
  return { id: uid('evt'), type, occurredAt: at.toISOString(), accountId, runtimeId, seq, data };
}
