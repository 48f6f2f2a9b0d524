import type { Call } from './pipelined-transaction';

/**
 * A read one module offers another: the statement (sent in the caller's round trip, e.g. with its
 * locks) and how its rows become typed values. The SQL stays with the module that owns the tables.
 */
export interface TypedRead<T> {
  call: Call;
  parse(rows: unknown[]): T;
}
