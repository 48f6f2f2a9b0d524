import { describe, expect, it } from 'vitest';
import { withRelation, type SqlRelation } from './sql-relation';

describe('withRelation', () => {
  it("numbers the relation's values after the statement's own, so the driver binds every value", () => {
    const relation: SqlRelation<{ id: string }> = {
      select: (bind) => `SELECT id FROM t WHERE a = ${bind("it's")}::text AND b = ${bind(42n)}::bigint`,
    };
    const statement = withRelation(['topic', null], relation, (select) => `INSERT INTO x SELECT $1::text, r.id FROM (${select}) r`);
    expect(statement.text).toBe(`INSERT INTO x SELECT $1::text, r.id FROM (SELECT id FROM t WHERE a = $3::text AND b = $4::bigint) r`);
    expect(statement.values).toEqual(['topic', null, "it's", 42n]);
  });

  it('leaves the statement as it is when the relation binds nothing', () => {
    const statement = withRelation([1], { select: () => 'SELECT 1 AS n' }, (select) => `WITH r AS (${select}) SELECT $1::int + n FROM r`);
    expect(statement).toEqual({ text: 'WITH r AS (SELECT 1 AS n) SELECT $1::int + n FROM r', values: [1] });
  });
});
