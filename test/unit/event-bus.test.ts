import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OPERATOR } from '../../src/core/actor.js';
import type { DomainEvent } from '../../src/events/domain-events.js';
import { changing, emitted, EventBus, type Writer } from '../../src/events/event-bus.js';
import { connectDatabase, type DatabaseHandle } from '../../src/storage/connect.js';
import { actingOf } from '../support/acting.js';

/**
 * The bus of issue #37 §2 (src/events/event-bus.ts) on a real SQLite database, file-backed so that
 * a second connection tells what has committed: listeners hear a change's events after its COMMIT,
 * in the order emitted; a change that throws (in its work or in a recorder) is rolled back and
 * delivers nothing; recorders write in the change's own transaction, each once with its events.
 */
let dir: string;
let handle: DatabaseHandle;
let errors: { object: object; message: string }[];
let bus: EventBus;
let deps: { db: DatabaseHandle['db']; bus: EventBus };
const acting = actingOf(OPERATOR, 1_000);

const created = (channelId: string): DomainEvent => ({ type: 'channel.created', serverId: 's1', channelId, name: `c-${channelId}` });
const posted = (messageId: string): DomainEvent => ({ type: 'message.created', serverId: 's1', channelId: 'c1', messageId });

/** The probe rows another connection sees: only what has committed. */
function committed(): string[] {
  const other = new SQLite(join(dir, 'bus.db'), { readonly: true });
  try {
    return (other.prepare('select name from probe order by name').all() as { name: string }[]).map((row) => row.name);
  } finally {
    other.close();
  }
}

const insertProbe = (db: Writer, name: string) => sql`insert into probe (name) values (${name})`.execute(db);

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gh-event-bus-'));
  handle = connectDatabase(join(dir, 'bus.db'));
  await sql`create table probe (name text primary key)`.execute(handle.db);
  errors = [];
  bus = new EventBus({ error: (object, message) => errors.push({ object, message }) });
  deps = { db: handle.db, bus };
});

afterEach(async () => {
  await handle.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('event bus: changing (issue #37 §2)', () => {
  it('listeners hear a change’s events after its COMMIT, in the order they were emitted, with its acting', async () => {
    const heard: { event: DomainEvent; seen: string[]; at: number }[] = [];
    bus.on(['channel.created', 'message.created'], (event, a) => heard.push({ event, seen: committed(), at: a.at }));
    const result = await changing(deps, acting, async (trx, emit) => {
      await insertProbe(trx, 'a');
      emit(created('1'));
      emit(posted('2'));
      emit(created('3'));
      // Nothing is delivered while the work runs.
      expect(heard).toEqual([]);
      return 'done';
    });
    expect(result).toBe('done');
    expect(heard.map((h) => h.event)).toEqual([created('1'), posted('2'), created('3')]);
    // Each listener call already saw the row committed (from another connection).
    expect(heard.map((h) => h.seen)).toEqual([['a'], ['a'], ['a']]);
    expect(heard.map((h) => h.at)).toEqual([1_000, 1_000, 1_000]);
  });

  it('a change whose work throws is rolled back and delivers nothing', async () => {
    const heard: DomainEvent[] = [];
    bus.on(['channel.created'], (event) => heard.push(event));
    const recorder = vi.fn(async () => {});
    bus.record(['channel.created'], recorder);
    await expect(
      changing(deps, acting, async (trx, emit) => {
        await insertProbe(trx, 'doomed');
        emit(created('1'));
        throw new Error('refused after the write');
      }),
    ).rejects.toThrow('refused after the write');
    expect(committed()).toEqual([]);
    expect(heard).toEqual([]);
    expect(recorder).not.toHaveBeenCalled();
  });

  it('a change whose recorder throws is rolled back (the work’s rows and the other recorders’ rows) and delivers nothing', async () => {
    const heard: DomainEvent[] = [];
    bus.on(['channel.created'], (event) => heard.push(event));
    bus.record(['channel.created'], async (db) => {
      await insertProbe(db, 'recorded');
    });
    bus.record(['channel.created'], async () => {
      throw new Error('the recorder failed');
    });
    await expect(
      changing(deps, acting, async (trx, emit) => {
        await insertProbe(trx, 'work');
        emit(created('1'));
      }),
    ).rejects.toThrow('the recorder failed');
    expect(committed()).toEqual([]);
    expect(heard).toEqual([]);
  });

  it('each recorder gets its own events of a change once, all together, with the change’s transaction, before the COMMIT', async () => {
    const calls: { who: string; inTransaction: boolean; events: DomainEvent[]; seen: string[] }[] = [];
    bus.record(['channel.created'], async (db, _a, events) => {
      calls.push({ who: 'channels', inTransaction: db.isTransaction, events: [...events], seen: committed() });
      await insertProbe(db, 'by-recorder');
    });
    bus.record(['channel.created', 'message.created'], async (db, _a, events) => {
      calls.push({ who: 'both', inTransaction: db.isTransaction, events: [...events], seen: committed() });
    });
    await changing(deps, acting, async (trx, emit) => {
      await insertProbe(trx, 'by-work');
      emit(created('1'));
      emit(posted('2'));
      emit(created('3'));
    });
    expect(calls).toEqual([
      { who: 'channels', inTransaction: true, events: [created('1'), created('3')], seen: [] },
      { who: 'both', inTransaction: true, events: [created('1'), posted('2'), created('3')], seen: [] },
    ]);
    // The recorder's row went out in the change's commit.
    expect(committed()).toEqual(['by-recorder', 'by-work']);
  });

  it('a listener that throws is logged with the event type, the change still resolves, and the next listener still hears it', async () => {
    const heard: string[] = [];
    bus.on(['channel.created'], () => {
      throw new Error('listener bug');
    });
    bus.on(['channel.created'], (event) => heard.push(event.type));
    await expect(
      changing(deps, acting, async (trx, emit) => {
        await insertProbe(trx, 'kept');
        emit(created('1'));
        return 7;
      }),
    ).resolves.toBe(7);
    expect(heard).toEqual(['channel.created']);
    expect(committed()).toEqual(['kept']);
    expect(errors).toEqual([{ object: { err: expect.objectContaining({ message: 'listener bug' }), event: 'channel.created' }, message: 'an event listener failed' }]);
  });
});

describe('event bus: emitted (issue #37 §2)', () => {
  it('with no recorder for its type, delivers before returning and answers the same settled promise every time (nothing allocated per call)', async () => {
    const heard: string[] = [];
    bus.on(['message.created'], (event) => heard.push(event.type === 'message.created' ? event.messageId : ''));
    bus.record(['channel.created'], async () => {});
    const first = emitted(deps, acting, posted('1'));
    // Synchronous: heard before anything was awaited.
    expect(heard).toEqual(['1']);
    const second = emitted(deps, acting, posted('2'));
    const unheard = emitted(deps, acting, { type: 'access.changed', topicId: 't' });
    expect(second).toBe(first);
    expect(unheard).toBe(first);
    await expect(first).resolves.toBeUndefined();
    expect(heard).toEqual(['1', '2']);
  });

  it('with a recorder, records with the database (no transaction of its own) and delivers after the recorder’s write settled', async () => {
    const order: string[] = [];
    bus.record(['channel.created'], async (db, _a, events) => {
      expect(db.isTransaction).toBe(false);
      await insertProbe(db, `recorded-${events.length}`);
      order.push('recorded');
    });
    bus.on(['channel.created'], () => order.push(`delivered, committed: ${committed().join(',')}`));
    await emitted(deps, acting, created('1'));
    expect(order).toEqual(['recorded', 'delivered, committed: recorded-1']);
  });

  it('a listener that throws on an emitted event is logged and the promise still resolves', async () => {
    bus.on(['message.created'], () => {
      throw new Error('listener bug');
    });
    await expect(emitted(deps, acting, posted('1'))).resolves.toBeUndefined();
    expect(errors).toHaveLength(1);
    expect(errors[0]?.object).toMatchObject({ event: 'message.created' });
  });
});
