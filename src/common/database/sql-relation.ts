/**
 * Rows one module hands another inside PostgreSQL, without taking them out as JSON and parsing them
 * again: a SELECT written by the module that holds the rows (over its own tables, temporary ones
 * included), which the consuming module embeds in the statement that writes its own tables. Values
 * are never written into the SQL: the SELECT asks the consumer's statement for a placeholder per
 * value (`bind`), so the driver binds them with the consumer's own parameters.
 *
 * `Row` names the columns the SELECT yields (the consumer reads them by these names).
 */
export interface SqlRelation<Row extends object> {
  /** The SELECT, given `bind`, which appends a value to the consuming statement's parameters and returns its placeholder (`$n`). */
  readonly select: (bind: (value: unknown) => string) => string;
  /** The rows' shape (a type only: never set). */
  readonly row?: Row;
}

/**
 * A statement's text with `relation` embedded by `embed` (given the SELECT's text), and its
 * parameters: `values` first ($1…), then the relation's ($n…).
 */
export function withRelation<Row extends object>(
  values: readonly unknown[],
  relation: SqlRelation<Row>,
  embed: (select: string) => string,
): { text: string; values: unknown[] } {
  const all = [...values];
  const select = relation.select((value) => {
    all.push(value);
    return `$${all.length}`;
  });
  return { text: embed(select), values: all };
}
