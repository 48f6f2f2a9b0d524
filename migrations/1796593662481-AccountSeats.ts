import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An account's seats were counted on every read (the console's account page twice a view, each seat
 * push, each member change's answer): the active members' index entries, 40,000 for an account of
 * 40,000 seats. The count is now kept in account_seats by triggers on account_members, in the
 * statement (so the transaction) that changes a member: whoever writes a member, the count is exact
 * as that transaction sees it. Filled here from the members there are, while the triggers' creation
 * holds account_members against writes.
 *
 * A statement's change is added per account in account order; an increment creates the row, a
 * decrement finds it (a seat removed from an account without a count is refused, as a count below 0
 * is by the check). TRUNCATE empties the counts.
 */
export class AccountSeats1796593662481 implements MigrationInterface {
  name = 'AccountSeats1796593662481';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
            CREATE TABLE "account_seats" (
                "account_id" text NOT NULL,
                "seats" integer NOT NULL,
                CONSTRAINT "account_seats_count_check" CHECK ("seats" >= 0),
                CONSTRAINT "PK_9279ab76cd324d4525e3863847f" PRIMARY KEY ("account_id")
            )
        `);
    await queryRunner.query(`
      CREATE FUNCTION account_seats_add(account text, delta int) RETURNS void LANGUAGE plpgsql AS $$
      BEGIN
        IF delta > 0 THEN
          INSERT INTO account_seats AS s (account_id, seats) VALUES (account, delta)
          ON CONFLICT (account_id) DO UPDATE SET seats = s.seats + EXCLUDED.seats;
        ELSE
          UPDATE account_seats SET seats = seats + delta WHERE account_id = account;
          IF NOT FOUND THEN
            RAISE EXCEPTION 'account_seats: % seat(s) removed from account %, which has no seat count', -delta, account;
          END IF;
        END IF;
      END $$
    `);
    // Each event's transition tables are its own (an INSERT has no old rows): a query per event.
    await queryRunner.query(`
      CREATE FUNCTION account_seats_count() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        c record;
      BEGIN
        IF TG_OP = 'INSERT' THEN
          FOR c IN SELECT account_id, count(*)::int AS delta FROM new_rows WHERE active GROUP BY account_id ORDER BY account_id LOOP
            PERFORM account_seats_add(c.account_id, c.delta);
          END LOOP;
        ELSIF TG_OP = 'UPDATE' THEN
          FOR c IN
            SELECT account_id, sum(d)::int AS delta FROM (
              SELECT account_id, 1 AS d FROM new_rows WHERE active UNION ALL SELECT account_id, -1 FROM old_rows WHERE active
            ) changed GROUP BY account_id HAVING sum(d) <> 0 ORDER BY account_id
          LOOP
            PERFORM account_seats_add(c.account_id, c.delta);
          END LOOP;
        ELSIF TG_OP = 'DELETE' THEN
          FOR c IN SELECT account_id, -count(*)::int AS delta FROM old_rows WHERE active GROUP BY account_id ORDER BY account_id LOOP
            PERFORM account_seats_add(c.account_id, c.delta);
          END LOOP;
        ELSE
          DELETE FROM account_seats;
        END IF;
        RETURN NULL;
      END $$
    `);
    await queryRunner.query(`
      CREATE TRIGGER account_seats_inserted AFTER INSERT ON account_members
        REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION account_seats_count()
    `);
    await queryRunner.query(`
      CREATE TRIGGER account_seats_updated AFTER UPDATE ON account_members
        REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION account_seats_count()
    `);
    await queryRunner.query(`
      CREATE TRIGGER account_seats_deleted AFTER DELETE ON account_members
        REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION account_seats_count()
    `);
    await queryRunner.query(`
      CREATE TRIGGER account_seats_truncated AFTER TRUNCATE ON account_members FOR EACH STATEMENT EXECUTE FUNCTION account_seats_count()
    `);
    await queryRunner.query(`
      INSERT INTO account_seats (account_id, seats)
      SELECT account_id, count(*) FROM account_members WHERE active GROUP BY account_id
    `);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    for (const t of ['inserted', 'updated', 'deleted', 'truncated']) {
      await queryRunner.query(`DROP TRIGGER account_seats_${t} ON account_members`);
    }
    await queryRunner.query(`DROP FUNCTION account_seats_count()`);
    await queryRunner.query(`DROP FUNCTION account_seats_add(text, int)`);
    await queryRunner.query(`
            DROP TABLE "account_seats"
        `);
  }
}
