/**
 * What: where domain events (events/domain-events.ts) go once a service emits them. Two kinds of
 * subscriber: a recorder writes what it keeps in the change's own commit (the audit log), a
 * listener hears the event after that commit (live views, later app-event deliveries).
 * Invariant: nothing is delivered before the change it describes has committed, and a change that
 * rolled back delivers nothing: `changing` records inside the transaction and delivers after it;
 * `emitted` is called after the change's write was acknowledged (which is after its COMMIT: a
 * SQLite write settles after its write group's COMMIT, storage/sqlite/write-groups.ts). A
 * listener that throws is logged and does not fail the change, which has happened.
 * Cost: an event with no recorder and no listener for its type costs a lookup in a small map; one
 * with listeners only is delivered synchronously, with no promise of its own (the execute path,
 * docs/performance.md).
 * Tested: test/unit/event-bus.test.ts; test/storage/audit-commit.test.ts (recorded in the commit).
 */
import type { Kysely, Transaction } from 'kysely';
import type { Acting, Who } from '../core/acting.js';
import type { Database } from '../storage/database.js';
import type { DomainEvent, EventOf, EventType } from './domain-events.js';

/** The database a recorder writes with: the change's transaction, or the database when there is none. */
export type Writer = Kysely<Database> | Transaction<Database>;

/** Writes what it keeps of `events` with `db`; awaited before the change commits. */
export type Recorder = (db: Writer, acting: Acting<Who>, events: readonly DomainEvent[]) => Promise<void>;

/** Hears one event after its change committed. */
export type Listener<T extends EventType = EventType> = (event: EventOf<T>, acting: Acting<Who>) => void;

/** What `changing` hands to the work it runs: the transaction, and where its events go. */
export type Emit = (event: DomainEvent) => void;

type BusLogger = { error(object: object, message: string): void };

const RESOLVED: Promise<void> = Promise.resolve();

export class EventBus {
  readonly #recorders = new Map<EventType, Recorder[]>();
  readonly #listeners = new Map<EventType, Listener[]>();
  readonly #logger: BusLogger;

  constructor(logger: BusLogger) {
    this.#logger = logger;
  }

  /** `recorder` writes the events of `types` in their change's commit. Returns a function that removes it. */
  record(types: readonly EventType[], recorder: Recorder): () => void {
    for (const type of types) this.#recorders.set(type, [...(this.#recorders.get(type) ?? []), recorder]);
    return () => {
      for (const type of types) this.#recorders.set(type, (this.#recorders.get(type) ?? []).filter((r) => r !== recorder));
    };
  }

  /** `listener` hears each event of `types` after its change committed. Returns a function that removes it. */
  on<T extends EventType>(types: readonly T[], listener: Listener<T>): () => void {
    const any = listener as unknown as Listener;
    for (const type of types) this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), any]);
    return () => {
      for (const type of types) this.#listeners.set(type, (this.#listeners.get(type) ?? []).filter((l) => l !== any));
    };
  }

  /** Whether some recorder keeps events of this type (the audit log's catalogue). */
  recorded(type: EventType): boolean {
    return (this.#recorders.get(type)?.length ?? 0) > 0;
  }

  /** Runs every recorder that keeps one of `events`, with `db`, each once with its events. */
  async recordWith(db: Writer, acting: Acting<Who>, events: readonly DomainEvent[]): Promise<void> {
    const byRecorder = new Map<Recorder, DomainEvent[]>();
    for (const event of events) {
      for (const recorder of this.#recorders.get(event.type) ?? []) {
        const list = byRecorder.get(recorder);
        if (list === undefined) byRecorder.set(recorder, [event]);
        else list.push(event);
      }
    }
    for (const [recorder, list] of byRecorder) await recorder(db, acting, list);
  }

  /** Hands `event` to its listeners; a listener that throws is logged, never rethrown (the change has happened). */
  deliver(acting: Acting<Who>, event: DomainEvent): void {
    const listeners = this.#listeners.get(event.type);
    if (listeners === undefined) return;
    for (const listener of listeners) {
      try {
        listener(event, acting);
      } catch (error) {
        this.#logger.error({ err: error, event: event.type }, 'an event listener failed');
      }
    }
  }

  /**
   * An event of a change that has committed (its write was acknowledged), or of something that
   * changed nothing (a refused sign-in): recorded with the database, then delivered. With no
   * recorder for its type, delivered at once and answered with a shared settled promise.
   */
  emitted(db: Kysely<Database>, acting: Acting<Who>, event: DomainEvent): Promise<void> {
    const recorders = this.#recorders.get(event.type);
    if (recorders === undefined || recorders.length === 0) {
      this.deliver(acting, event);
      return RESOLVED;
    }
    return this.recordWith(db, acting, [event]).then(() => this.deliver(acting, event));
  }

  /**
   * Runs `work` in a transaction; the events it emits are recorded in that transaction, after the
   * work and before the COMMIT, and delivered after the COMMIT. If `work` or a recorder throws,
   * the transaction rolls back and nothing is delivered.
   */
  async changing<T>(db: Kysely<Database>, acting: Acting<Who>, work: (trx: Transaction<Database>, emit: Emit) => Promise<T>): Promise<T> {
    const events: DomainEvent[] = [];
    const emit: Emit = (event) => {
      events.push(event);
    };
    const result = await db.transaction().execute(async (trx) => {
      const value = await work(trx, emit);
      if (events.length > 0) await this.recordWith(trx, acting, events);
      return value;
    });
    for (const event of events) this.deliver(acting, event);
    return result;
  }
}

/** Emits events of a change that has committed: `deps.bus.emitted(deps.db, …)` for a service. */
export function emitted(deps: { db: Kysely<Database>; bus: EventBus }, acting: Acting<Who>, event: DomainEvent): Promise<void> {
  return deps.bus.emitted(deps.db, acting, event);
}

/** Runs a change in a transaction with its events: `deps.bus.changing(deps.db, …)` for a service. */
export function changing<T>(deps: { db: Kysely<Database>; bus: EventBus }, acting: Acting<Who>, work: (trx: Transaction<Database>, emit: Emit) => Promise<T>): Promise<T> {
  return deps.bus.changing(deps.db, acting, work);
}
