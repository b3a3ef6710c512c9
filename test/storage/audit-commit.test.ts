import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Acting } from '../../src/core/acting.js';
import { person } from '../../src/core/actor.js';
import type { DomainEvent } from '../../src/events/domain-events.js';
import { changing, emitted } from '../../src/events/event-bus.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { statementsDuring, testDialect } from '../support/database.js';

/**
 * Issue #37 §2, §5: an audited event emitted in `changing` is written in the change's own
 * transaction (recorded after the work, before the COMMIT), on SQLite and, with
 * TEST_DATABASE_URL, on PostgreSQL: the change and its audit row are kept or lost together, and on
 * SQLite they share one write-group COMMIT. Audit rows of `emitted` events of one event-loop turn
 * go out as one insert on PostgreSQL (modules/audit/audit.repository.ts) and share one COMMIT on
 * SQLite. The services of a real app (its bus with the audit recorder subscribed); the change is a
 * row of a probe table of this test's own.
 */
let t: TestApp;
const acting: Acting = { actor: person('1001'), address: '203.0.113.7', requestId: 'req-audit-commit', at: 1_700_000_000_000, reason: 'tidying up' };
const created = (channelId: string): DomainEvent => ({ type: 'channel.created', serverId: '2002', channelId, name: `general-${channelId}` });

beforeEach(async () => {
  t = await createTestApp();
  await sql`create table probe (name text primary key)`.execute(t.services.db);
});

afterEach(async () => {
  await t.close();
});

const probes = async () => (await sql<{ name: string }>`select name from probe order by name`.execute(t.services.db)).rows.map((r) => r.name);
const auditRows = () => t.services.db.selectFrom('audit_events').select(['action', 'action_type', 'server_id', 'actor_kind', 'actor_id', 'target_id', 'address', 'request_id', 'reason', 'created_at']).orderBy('id').execute();

describe(`audit rows are written in the change's commit (${testDialect})`, () => {
  it('a change and its audited event are kept together: the probe row and the audit row with action, actor, target, server, address and request id', async () => {
    await changing(t.services, acting, async (trx, emit) => {
      await sql`insert into probe (name) values (${'kept'})`.execute(trx);
      emit(created('3003'));
    });
    expect(await probes()).toEqual(['kept']);
    const rows = await auditRows();
    expect(rows.map((r) => ({ ...r, action_type: Number(r.action_type), created_at: Number(r.created_at), server_id: String(r.server_id), actor_id: String(r.actor_id) }))).toEqual([
      { action: 'channel.created', action_type: 10, server_id: '2002', actor_kind: 'person', actor_id: '1001', target_id: '3003', address: '203.0.113.7', request_id: 'req-audit-commit', reason: 'tidying up', created_at: 1_700_000_000_000 },
    ]);
  });

  it('a change whose work throws after its write and its event leaves neither the row nor an audit row', async () => {
    await expect(
      changing(t.services, acting, async (trx, emit) => {
        await sql`insert into probe (name) values (${'doomed'})`.execute(trx);
        emit(created('3003'));
        throw new Error('refused after the write');
      }),
    ).rejects.toThrow('refused after the write');
    expect(await probes()).toEqual([]);
    expect(await auditRows()).toEqual([]);
  });

  it('an audit row already written is rolled back with its change when a later recorder fails before the COMMIT', async () => {
    let auditRowsInTransaction = -1;
    const stop = t.services.bus.record(['channel.created'], async (db) => {
      // The audit recorder (subscribed by the app, before this one) has written its row, in this transaction.
      auditRowsInTransaction = (await db.selectFrom('audit_events').select('id').execute()).length;
      throw new Error('a later recorder failed');
    });
    try {
      await expect(
        changing(t.services, acting, async (trx, emit) => {
          await sql`insert into probe (name) values (${'doomed'})`.execute(trx);
          emit(created('3003'));
        }),
      ).rejects.toThrow('a later recorder failed');
    } finally {
      stop();
    }
    expect(auditRowsInTransaction).toBe(1);
    expect(await probes()).toEqual([]);
    expect(await auditRows()).toEqual([]);
  });
});

// Each dialect's own evidence runs on that dialect; the other's is skipped, and says so.
console.warn(`test/storage/audit-commit.test.ts: the ${testDialect === 'sqlite' ? 'PostgreSQL' : 'SQLite'} block is skipped: this run is on ${testDialect} (TEST_DATABASE_URL ${testDialect === 'sqlite' ? 'unset' : 'set'})`);

describe.runIf(testDialect === 'sqlite')('SQLite: the change and its audit row share one write-group COMMIT', () => {
  it('the probe insert, then the audit insert, then exactly one COMMIT', async () => {
    const { statements } = await statementsDuring(t.database.handle, () =>
      changing(t.services, acting, async (trx, emit) => {
        await sql`insert into probe (name) values (${'one-commit'})`.execute(trx);
        emit(created('3003'));
      }),
    );
    // The probe's sql`` insert is timed as 'raw'; the audit row's is the builder's 'insert'.
    expect(statements.map((s) => s.operation)).toEqual(['raw', 'insert', 'commit']);
    expect(await auditRows()).toHaveLength(1);
  });

  it('audit rows of events emitted in one turn share one COMMIT', async () => {
    const { statements } = await statementsDuring(t.database.handle, () =>
      Promise.all(['1', '2', '3'].map((n) => emitted(t.services, acting, { type: 'signin.failed', username: `nobody-${n}`, userId: null, why: 'unknown-person' }))),
    );
    expect(statements.filter((s) => s.operation === 'commit')).toHaveLength(1);
    expect((await auditRows()).map((r) => r.action)).toEqual(['signin.failed', 'signin.failed', 'signin.failed']);
  });
});

describe.runIf(testDialect === 'postgres')('PostgreSQL: the audit row is written inside the transaction; emitted rows of one turn are one insert', () => {
  it('while the change is open, its transaction sees the audit row and another connection does not; after the COMMIT both do', async () => {
    const seen: { inside: number; outside: number }[] = [];
    const stop = t.services.bus.record(['channel.created'], async (db) => {
      const inside = (await db.selectFrom('audit_events').select('id').execute()).length;
      // The pool's other connection: what is committed.
      const outside = (await t.services.db.selectFrom('audit_events').select('id').execute()).length;
      seen.push({ inside, outside });
    });
    try {
      const { statements } = await statementsDuring(t.database.handle, () =>
        changing(t.services, acting, async (trx, emit) => {
          await sql`insert into probe (name) values (${'kept'})`.execute(trx);
          emit(created('3003'));
        }),
      );
      // The probe insert and the audit insert (then the two reads of the recorder above).
      expect(statements.map((s) => s.operation).slice(0, 2)).toEqual(['raw', 'insert']);
    } finally {
      stop();
    }
    expect(seen).toEqual([{ inside: 1, outside: 0 }]);
    expect(await auditRows()).toHaveLength(1);
  });

  it('audit rows of events emitted in one event-loop turn go out as one insert', async () => {
    const { statements } = await statementsDuring(t.database.handle, () =>
      Promise.all(['1', '2', '3'].map((n) => emitted(t.services, acting, { type: 'signin.failed', username: `nobody-${n}`, userId: null, why: 'unknown-person' }))),
    );
    expect(statements.map((s) => s.operation)).toEqual(['insert']);
    expect((await auditRows()).map((r) => r.action)).toEqual(['signin.failed', 'signin.failed', 'signin.failed']);
  });
});
