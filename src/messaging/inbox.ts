import type { EntityManager } from 'typeorm';
import { rows } from 'src/common/database/transaction';

/**
 * Records messages of `source` as received, in the caller's transaction, and returns the ids received
 * for the first time: a redelivered id is not among them, so its effect is not applied twice.
 */
export async function receiveOnce(em: Pick<EntityManager, 'query'>, source: string, messageIds: readonly string[]): Promise<Set<string>> {
  if (messageIds.length === 0) return new Set();
  const fresh = await rows<{ message_id: string }>(
    em,
    `INSERT INTO inbox (source, message_id) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING RETURNING message_id`,
    [source, messageIds],
  );
  return new Set(fresh.map((r) => r.message_id));
}

/**
 * The first copy of each id, in order. A later copy in the same batch is a duplicate, as a copy in a
 * later batch is: the first delivered is the one kept, whatever the later copy says. Messages for
 * which `byId` is false are not deduplicated by id here (they pass, in their place).
 */
export function firstOfEachId<T extends { id: string }>(messages: readonly T[], byId: (message: T) => boolean = () => true): T[] {
  const seen = new Set<string>();
  return messages.filter((m) => !byId(m) || (!seen.has(m.id) && seen.add(m.id)));
}
