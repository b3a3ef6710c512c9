/**
 * What: per-instance memories of database rows (CoherentCache) that every instance of one
 * database forgets before a change to those rows is acknowledged anywhere, over Redis.
 * Invariant: after a committed update or delete of a watched table (storage/committed-changes.ts)
 * returns to its caller, no instance answers from a memory taken before it: each live instance
 * has dropped its memories and said so, or its lease has run out and it answers from the database
 * until it hears its own heartbeat again. A read that was under way while memories were dropped
 * is not remembered.
 * Tested: test/storage/coherence.test.ts (leases, in-flight reads), test/http/bearer-coherence.test.ts
 * (two instances on one PostgreSQL and Redis).
 *
 * How (docs/performance.md §Bearer checks from memory):
 * - Every instance subscribes to the namespace's channel and, every third of LEASE_MS, runs one script
 *   that records it in the members set (score: Redis's time + LEASE_MS) and PUBLISHes a heartbeat
 *   naming it on that channel. It may answer from memory until LEASE_MS less a sixth after it SENT
 *   the last heartbeat it has RECEIVED back: a channel delivers in publish order, so every
 *   forget-message published before that heartbeat has been received and applied.
 * - A change: forget locally, then one script PUBLISHes "forget" and returns the members whose
 *   lease has not run out; each acknowledges on the sender's own channel after forgetting. The
 *   change returns when all have, or LEASE_MS after the publish: an instance that could not
 *   acknowledge by then has not received a heartbeat sent after the publish, so its own lease has
 *   run out (the clocks compared are each instance's monotonic clock, over the same durations).
 * - The subscriber connection closing forgets everything and ends the lease at once: messages
 *   sent while it was away are lost.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { withCascades } from './cascades.js';
import { connectRedis } from './redis.js';

/** How long a heartbeat keeps an instance answering from memory. */
export const LEASE_MS = 3_000;
/** The part of a lease kept off it for clock drift between instances: 500 ms of 3 s. */
const MARGIN_SHARE = 1 / 6;

export interface CoherenceOptions {
  /** Instances of one database share a namespace; a hash of the database's address. */
  namespace: string;
  /** Tests shorten the lease; the heartbeat is a third of it. */
  leaseMs?: number;
  /** Monotonic milliseconds (tests); performance.now by default. */
  now?: () => number;
  /**
   * Calls `listener`, awaited, after each committed update or delete of `tables`
   * (DatabaseHandle.onCommittedChange); called again as caches name more tables.
   */
  watch: (tables: readonly string[], listener: () => Promise<void>) => void;
}

export interface CoherentCacheCounters {
  readonly hits: number;
  readonly misses: number;
  readonly size: number;
}

/**
 * The longest anything is remembered: bounds what a change whose forget never reached Redis
 * (UnacknowledgedChangeError) can leave behind on instances that still hear heartbeats.
 */
export const MAX_AGE_MS = 60_000;

/**
 * A change committed but not told to the other instances (Redis refused the forget twice, a lease
 * apart): answered 503 (storage/unavailable.ts), and the caller may retry it.
 */
export class UnacknowledgedChangeError extends Error {
  constructor(cause: unknown) {
    super('the change was committed but other instances could not be told', { cause });
    this.name = 'UnacknowledgedChangeError';
  }
}

/** A per-instance memory of rows that the instances of one database forget together. */
export interface CoherentCache<V> extends CoherentCacheCounters {
  /** The remembered value, or `load()`'s, remembered when nothing was forgotten meanwhile. */
  read(key: string, load: () => Promise<V | undefined>): Promise<V | undefined>;
}

/**
 * A cache as a repository declares it, once, when it is loaded: its name, the tables its rows are
 * read from and its bound. Declared at load time because every instance must watch every
 * declared table from its start, whether or not it has remembered anything yet: an instance that
 * never made a bearer check still revokes tokens.
 */
export interface CacheDeclaration<V> {
  readonly name: string;
  readonly tables: readonly string[];
  readonly maxEntries: number;
  /** Types the declaration; no value. */
  readonly value?: V;
}

/**
 * A query a cache's rows are read with, as storage/prepared.ts declares it: the tables its
 * operation tree names (storage/query-tables.ts), undefined for raw `sql`.
 */
export interface ReadQuery {
  readonly tables: ReadonlySet<string> | undefined;
}

const declaredTables = new Set<string>();
const running = new Set<RedisCoherence>();

/**
 * Declares a cache (module scope) whose rows are read by `reads`. Any committed change of the
 * tables those queries name (storage/committed-changes.ts), on any instance, forgets every cache.
 * The tables come from the compiled queries (issue #37 §4), never from a list kept by hand: a
 * query that gains a join watches the joined table too. The tables whose deletes cascade into
 * those are watched as well (storage/cascades.ts). A read in raw `sql` has no tree to read its
 * tables from and names them itself, beside the statement: table names in `reads`.
 */
export function declareCoherentCache<V>(name: string, reads: readonly ReadQuery[] | readonly string[], maxEntries: number): CacheDeclaration<V> {
  const tables = new Set<string>();
  for (const read of reads) {
    if (typeof read === 'string') {
      tables.add(read);
      continue;
    }
    if (read.tables === undefined) throw new Error(`coherent cache "${name}": a read in raw sql must declare the tables it reads`);
    for (const table of read.tables) tables.add(table);
  }
  const watched = withCascades(tables);
  const before = declaredTables.size;
  for (const table of watched) declaredTables.add(table);
  if (declaredTables.size !== before) for (const coherence of running) coherence.watchDeclaredTables();
  return { name, tables: watched, maxEntries };
}

/** The coherence of each database handle's Kysely instance (not its transactions), attached by services.ts. */
const attached = new WeakMap<object, Coherence>();

/** services.ts: reads of `db` (PostgreSQL with Redis) may be remembered by `coherence`; undefined detaches. */
export function attachCoherence(db: object, coherence: Coherence | undefined): void {
  if (coherence === undefined) attached.delete(db);
  else attached.set(db, coherence);
}

/**
 * The coherence attached to `db` (PostgreSQL with Redis, outside transactions): a repository reads
 * through it when there is one, straight through otherwise (SQLite: its row cache answers below;
 * transactions: they must see their own writes). The repository's choice, not the service's.
 */
export function coherenceOf(db: object): Coherence | undefined {
  return attached.get(db);
}

export interface Coherence {
  /** This instance's cache of a declaration, made on first use. */
  cache<V>(declaration: CacheDeclaration<V>): CoherentCache<V>;
  /** Forgets everything here and on every live instance; resolves once they all have (or their leases ran out). */
  changed(): Promise<void>;
  /** Whether this instance may answer from memory now. */
  live(): boolean;
  readonly instanceId: string;
  close(): Promise<void>;
}

// KEYS: channel, members set. ARGV: instance, lease ms, heartbeat payload.
const HEARTBEAT_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[2]) * 10)
redis.call('PUBLISH', KEYS[1], ARGV[3])
return 1`;

// KEYS: channel, members set. ARGV: forget payload. Returns the members whose lease runs.
const FORGET_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('PUBLISH', KEYS[1], ARGV[1])
return redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf')`;

interface PendingChange {
  waiting: Set<string>;
  done: () => void;
}

class MemoryCache<V> implements CoherentCache<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  hits = 0;
  misses = 0;
  constructor(
    private readonly owner: RedisCoherence,
    private readonly maxEntries: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  async read(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    if (!this.owner.live()) return load();
    const known = this.entries.get(key);
    if (known !== undefined && known.until > this.owner.clock()) {
      this.hits += 1;
      return known.value;
    }
    this.misses += 1;
    const epoch = this.owner.epoch;
    const value = await load();
    // Something was forgotten while the row was read (or the lease changed): the row may predate
    // the change, so it answers this request only.
    if (value !== undefined && epoch === this.owner.epoch && this.owner.live()) {
      if (this.entries.size >= this.maxEntries) this.entries.clear();
      // The same object answers every later request: nobody may change it (as SQLite's row cache).
      this.entries.set(key, { value: frozen(value), until: this.owner.clock() + MAX_AGE_MS });
    }
    return value;
  }

  clear(): void {
    this.entries.clear();
  }
}

/** `value` and the objects and arrays it holds, frozen. */
function frozen<V>(value: V): V {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) frozen(inner);
    Object.freeze(value);
  }
  return value;
}

export class RedisCoherence implements Coherence {
  readonly instanceId = randomBytes(6).toString('hex');
  /** Bumped whenever memories are dropped or the lease starts again: reads under way are not kept. */
  epoch = 0;
  private readonly caches = new Map<string, MemoryCache<unknown>>();
  private readonly watch: CoherenceOptions['watch'];
  private readonly channel: string;
  private readonly ackChannel: string;
  private readonly membersKey: string;
  private readonly leaseMs: number;
  private readonly marginMs: number;
  private readonly now: () => number;
  /** Monotonic milliseconds, for the caches' MAX_AGE_MS. */
  readonly clock = (): number => this.now();
  private liveUntil = 0;
  private sequence = 0;
  /** Heartbeats sent since the subscriber last connected, by sequence → when sent. */
  private readonly heartbeats = new Map<number, number>();
  private readonly pending = new Map<number, PendingChange>();
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly client: Redis,
    private readonly subscriber: Redis,
    options: CoherenceOptions,
  ) {
    const prefix = `gh:coh:${options.namespace}`;
    this.channel = prefix;
    this.ackChannel = `${prefix}:ack:${this.instanceId}`;
    this.membersKey = `${prefix}:members`;
    this.leaseMs = options.leaseMs ?? LEASE_MS;
    this.marginMs = Math.round(this.leaseMs * MARGIN_SHARE);
    this.now = options.now ?? (() => performance.now());
    this.watch = options.watch;
    subscriber.on('message', (channel: string, message: string) => this.hear(channel, message));
    // Messages published while the connection was away are lost: forget everything, and stay
    // off memory until a heartbeat sent after this comes back.
    subscriber.on('close', () => this.lapse());
    subscriber.subscribe(this.channel, this.ackChannel).then(
      () => this.heartbeat(),
      () => undefined,
    );
    this.timer = setInterval(() => this.heartbeat(), Math.max(50, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
    running.add(this);
    this.watchDeclaredTables();
  }

  /** Every declared table, from the start (CacheDeclaration). */
  watchDeclaredTables(): void {
    if (declaredTables.size > 0) this.watch([...declaredTables], () => this.changed());
  }

  cache<V>(declaration: CacheDeclaration<V>): CoherentCache<V> {
    let cache = this.caches.get(declaration.name);
    if (cache === undefined) {
      cache = new MemoryCache<unknown>(this, declaration.maxEntries);
      this.caches.set(declaration.name, cache);
    }
    return cache as CoherentCache<V>;
  }

  live(): boolean {
    if (this.liveUntil === 0) return false;
    if (this.now() < this.liveUntil) return true;
    // Heartbeats under way still count: one coming back starts the lease again.
    this.liveUntil = 0;
    this.forget();
    return false;
  }

  async changed(): Promise<void> {
    this.forget();
    const sequence = ++this.sequence;
    let members: string[];
    try {
      members = await this.publishForget(sequence);
    } catch {
      // Redis did not take the message. Instances that cannot reach it either stop answering
      // from memory within a lease; wait that long, then try once more for those that can.
      await new Promise((resolve) => setTimeout(resolve, this.leaseMs).unref());
      try {
        members = await this.publishForget(sequence);
      } catch (error) {
        throw new UnacknowledgedChangeError(error);
      }
    }
    const waiting = new Set(members.filter((member) => member !== this.instanceId));
    if (waiting.size === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(finish, this.leaseMs);
      timer.unref();
      const pending = this.pending;
      function finish() {
        clearTimeout(timer);
        pending.delete(sequence);
        resolve();
      }
      pending.set(sequence, { waiting, done: finish });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    running.delete(this);
    clearInterval(this.timer);
    this.lapse();
    for (const change of [...this.pending.values()]) change.done();
    await this.client.zrem(this.membersKey, this.instanceId).catch(() => undefined);
    this.subscriber.disconnect();
    this.client.disconnect();
  }

  private publishForget(sequence: number): Promise<string[]> {
    return this.client.eval(FORGET_SCRIPT, 2, this.channel, this.membersKey, `f:${this.instanceId}:${sequence}`) as Promise<string[]>;
  }

  private heartbeat(): void {
    if (this.closed) return;
    const sequence = ++this.sequence;
    const now = this.now();
    // One that has not come back within a lease could no longer extend it (subscriber deaf, say).
    for (const [earlier, sentAt] of this.heartbeats) if (sentAt <= now - this.leaseMs) this.heartbeats.delete(earlier);
    this.heartbeats.set(sequence, now);
    this.client.eval(HEARTBEAT_SCRIPT, 2, this.channel, this.membersKey, this.instanceId, this.leaseMs, `h:${this.instanceId}:${sequence}`).catch(() => {
      this.heartbeats.delete(sequence);
    });
  }

  private hear(channel: string, message: string): void {
    if (channel === this.ackChannel) {
      const [sequence, member] = message.split(':');
      const change = this.pending.get(Number(sequence));
      if (change === undefined || member === undefined) return;
      change.waiting.delete(member);
      if (change.waiting.size === 0) change.done();
      return;
    }
    if (channel !== this.channel) return;
    const [kind, sender, sequenceText] = message.split(':');
    const sequence = Number(sequenceText);
    if (kind === 'f') {
      if (sender === this.instanceId) return;
      this.forget();
      this.client.publish(`${this.channel}:ack:${sender}`, `${sequence}:${this.instanceId}`).catch(() => undefined);
    } else if (kind === 'h' && sender === this.instanceId) {
      const sentAt = this.heartbeats.get(sequence);
      if (sentAt === undefined) return;
      // Every heartbeat sent before this one has come back or never will.
      for (const earlier of this.heartbeats.keys()) if (earlier <= sequence) this.heartbeats.delete(earlier);
      if (this.liveUntil === 0) this.epoch += 1;
      this.liveUntil = Math.max(this.liveUntil, sentAt + this.leaseMs - this.marginMs);
    }
  }

  private forget(): void {
    this.epoch += 1;
    for (const cache of this.caches.values()) cache.clear();
  }

  private lapse(): void {
    this.liveUntil = 0;
    this.heartbeats.clear();
    this.forget();
  }
}

/**
 * The instance's coherence over `url`: a command connection that fails fast (connectRedis) and a
 * subscriber that keeps reconnecting and subscribes again by itself.
 */
export function createCoherence(url: string, options: CoherenceOptions): RedisCoherence {
  const subscriber = new Redis(url, { maxRetriesPerRequest: null, connectTimeout: 2000, retryStrategy: (times) => Math.min(times * 200, 2000) });
  // An outage ends the lease ('close' above); it is not an unhandled event.
  subscriber.on('error', () => undefined);
  return new RedisCoherence(connectRedis(url), subscriber, options);
}
