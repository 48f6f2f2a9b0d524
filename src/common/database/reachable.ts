import pg from 'pg';

/** Where a postgres:// URL points, without its credentials: `host:port/database`. */
export function databaseAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'an unparsable DATABASE_URL';
  }
}

/**
 * Connects once and runs `SELECT 1` within `timeoutMs`, so a command fails in seconds on an
 * unreachable database instead of waiting out TypeORM's connection retries. Throws the reason.
 */
export async function assertDatabaseReachable(url: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}
