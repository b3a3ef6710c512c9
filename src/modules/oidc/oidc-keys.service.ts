import { calculateJwkThumbprint, compactVerify, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload } from 'jose';
import type { Acting, Who } from '../../core/acting.js';
import { HOUR, SECOND } from '../../core/clock.js';
import type { Deps } from '../../deps.js';
import { changing } from '../../events/event-bus.js';
import { isUniqueViolation } from '../../storage/types.js';
import { openPrivateKey, sealPrivateKey } from './key-sealing.js';
import { isSigningAlg, SIGNING_ALGS, type SigningAlg } from './signing-algs.js';

export { DEFAULT_SIGNING_ALG, isSigningAlg, SIGNING_ALGS, type SigningAlg } from './signing-algs.js';
import { insertSigningKey, newestGeneration, listSigningKeys, retireKeysBelow, type StoredSigningKey } from './oidc.repository.js';

/** OpenID Connect Core §2 exp: an ID token is valid as long as the access token it came with. */
export const ID_TOKEN_LIFETIME_MS = HOUR;
/**
 * How long an instance keeps the keys it read before reading them again: a rotation done by
 * another instance (or the CLI) is picked up within this time, and at once on an unknown kid.
 */
export const KEY_CACHE_TTL_MS = 60 * SECOND;
/**
 * A retired key stays published this long after retirement: every instance may still sign with
 * it for up to one cache period, and each such token lives one ID-token lifetime.
 */
export const RETIRED_KEY_PUBLISHED_MS = ID_TOKEN_LIFETIME_MS + KEY_CACHE_TTL_MS;
/** Cache-Control max-age of the JWKS (seconds): how long a relying party may keep a key set it fetched. */
export const JWKS_MAX_AGE_S = 300;
/**
 * Issue #36 §6: a rotated-in key is published this long before it signs anything, so a key set
 * any relying party still holds from before the rotation (at most JWKS_MAX_AGE_S old) already
 * has it. The margin covers clocks of instances and the CLI that disagree by up to a minute.
 */
export const NEXT_KEY_LEAD_MS = JWKS_MAX_AGE_S * SECOND + 60 * SECOND;

/** An imported private key, as jose's importJWK returns it. */
type PrivateKey = Awaited<ReturnType<typeof importJWK>>;

interface LoadedKey {
  stored: StoredSigningKey;
  publicJwk: JWK;
}

interface KeyRing {
  loadedAt: number;
  keys: LoadedKey[];
  /** Imported private keys by kid: opening one (scrypt when sealed) happens once per process. */
  privateKeys: Map<string, Promise<PrivateKey>>;
}

/**
 * One ring per database handle (not a global: tests run many apps in one process, each on its
 * own database). It holds only what the database already holds.
 */
const rings = new WeakMap<object, KeyRing>();

async function loadRing(deps: Deps, previous: KeyRing | undefined): Promise<KeyRing> {
  const now = deps.clock.now();
  const rows = await listSigningKeys(deps.db, now - RETIRED_KEY_PUBLISHED_MS);
  const ring: KeyRing = {
    loadedAt: now,
    keys: rows.map((stored) => ({ stored, publicJwk: JSON.parse(stored.publicJwk) as JWK })),
    privateKeys: previous?.privateKeys ?? new Map(),
  };
  rings.set(deps.db, ring);
  return ring;
}

async function currentRing(deps: Deps): Promise<KeyRing> {
  const ring = rings.get(deps.db);
  if (ring && deps.clock.now() - ring.loadedAt < KEY_CACHE_TTL_MS && deps.clock.now() >= ring.loadedAt) return ring;
  return loadRing(deps, ring);
}

/**
 * The key that signs `alg` at `now`: the oldest generation not yet retired. `keys rotate` gives
 * the key it replaces a retirement time NEXT_KEY_LEAD_MS ahead, so the new key is published but
 * waits until then (issue #36 §6: published before use).
 */
function activeKey(ring: KeyRing, alg: SigningAlg, now: number): LoadedKey | undefined {
  // Rows come newest generation first.
  return ring.keys.findLast((k) => k.stored.alg === alg && (k.stored.retiredAt === null || k.stored.retiredAt > now));
}

/** Generates a key pair and its stored form; the kid is the RFC 7638 thumbprint of the public key. */
async function newKey(deps: Deps, alg: SigningAlg, generation: number): Promise<Omit<StoredSigningKey, 'retiredAt'>> {
  const pair = await generateKeyPair(alg, { extractable: true, ...(alg === 'RS256' ? { modulusLength: 2048 } : {}) });
  const publicJwk = await exportJWK(pair.publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJson = JSON.stringify(await exportJWK(pair.privateKey));
  const secret = deps.config.oidcKeySecret;
  return {
    kid,
    alg,
    generation,
    publicJwk: JSON.stringify({ ...publicJwk, kid, alg, use: 'sig' }),
    privateJwk: secret === undefined ? privateJson : sealPrivateKey(privateJson, secret, deps.random.bytes(16), deps.random.bytes(12)),
    createdAt: deps.clock.now(),
  };
}

/**
 * Issue #22 §3: on first start, one key per algorithm. Safe with several instances starting at
 * once on one database: each reads the newest generation and, only when it is missing or retired,
 * inserts the next one. Instances that read the same state insert the same generation, the unique
 * (alg, generation) constraint lets one win, and the losers read the winner's key; an instance
 * reading after the winner sees it active and inserts nothing.
 *
 * No `Acting` (issue #37 §1): nobody asks for this. It runs at start-up and, on an instance whose
 * keys were never made, before the first signature (signJwt, jwks) of whichever request comes;
 * it only fills a gap with the first generation, which is the configuration starting, not a
 * change someone makes. Rotations, which someone asks for, are audited (rotateSigningKeys).
 */
export async function ensureSigningKeys(deps: Deps): Promise<void> {
  let ring = await loadRing(deps, rings.get(deps.db));
  let inserted = false;
  let missing = false;
  for (const alg of SIGNING_ALGS) {
    if (activeKey(ring, alg, deps.clock.now())) continue;
    missing = true;
    const newest = await newestGeneration(deps.db, alg);
    if (newest.active) continue;
    try {
      await insertSigningKey(deps.db, await newKey(deps, alg, newest.generation + 1));
      inserted = true;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
  }
  // Reloaded whenever a key was missing: this instance's insert, or another's that won.
  if (missing) ring = await loadRing(deps, ring);
  // Fail at start-up, not at the first sign-in, when a sealed key cannot be opened.
  await Promise.all(SIGNING_ALGS.map((alg) => privateKeyOf(deps, ring, alg)));
  if (deps.config.oidcKeySecret === undefined && inserted) {
    deps.logger.warn('OpenID Connect signing keys were created unencrypted: set GATEHOUSE_OIDC_KEY_SECRET to encrypt new keys at rest (docs/oidc.md)');
  }
}

export interface RotatedKey {
  alg: string;
  kid: string;
  /** When the new key starts signing (ms): it is published from now, and signs from then on. */
  signsFrom: number;
  /** The kids it replaces; they sign until signsFrom and stay published until every token they signed has expired. */
  retired: string[];
}

/**
 * `gatehouse keys rotate` (issue #22 §3, issue #36 §6): a new generation per algorithm is
 * published at once and signs after NEXT_KEY_LEAD_MS; the keys it replaces sign until then and
 * stay in the JWKS for RETIRED_KEY_PUBLISHED_MS after. Every instance reads the new key within
 * KEY_CACHE_TTL_MS, well before it signs. Issue #37 §2: each algorithm's new key is recorded as
 * signing_key.rotated (its kid, never key material) in the transaction that inserts it.
 */
export async function rotateSigningKeys(deps: Deps, acting: Acting<Who>): Promise<RotatedKey[]> {
  const now = deps.clock.now();
  const signsFrom = now + NEXT_KEY_LEAD_MS;
  const before = await listSigningKeys(deps.db, now);
  const rotated: RotatedKey[] = [];
  for (const alg of SIGNING_ALGS) {
    const key = await newKey(deps, alg, (await newestGeneration(deps.db, alg)).generation + 1);
    const retired = before.filter((k) => k.alg === alg && k.retiredAt === null).map((k) => k.kid);
    await changing(deps, acting, async (trx, emit) => {
      await insertSigningKey(trx, key);
      // Only keys without a retirement time: one a rotation moments ago already scheduled keeps
      // its earlier time, so a second rotation cannot keep an older key signing for longer.
      await retireKeysBelow(trx, alg, key.generation, signsFrom);
      emit({ type: 'signing_key.rotated', alg, kid: key.kid, retired });
    });
    rotated.push({ alg, kid: key.kid, signsFrom, retired });
  }
  await loadRing(deps, rings.get(deps.db));
  return rotated;
}

/** Every published key, for `gatehouse keys list`; `signing` marks the one per algorithm that signs now. */
export async function listPublishedKeys(deps: Deps): Promise<{ kid: string; alg: string; createdAt: number; retiredAt: number | null; signing: boolean; encrypted: boolean }[]> {
  const ring = await loadRing(deps, rings.get(deps.db));
  const now = deps.clock.now();
  const signing = new Set(SIGNING_ALGS.map((alg) => activeKey(ring, alg, now)?.stored.kid));
  return ring.keys.map((k) => ({
    kid: k.stored.kid,
    alg: k.stored.alg,
    createdAt: k.stored.createdAt,
    retiredAt: k.stored.retiredAt,
    signing: signing.has(k.stored.kid),
    encrypted: k.stored.privateJwk.startsWith('enc:'),
  }));
}

function privateKeyOf(deps: Deps, ring: KeyRing, alg: SigningAlg): Promise<{ kid: string; key: PrivateKey }> | undefined {
  const loaded = activeKey(ring, alg, deps.clock.now());
  if (!loaded) return undefined;
  const kid = loaded.stored.kid;
  let key = ring.privateKeys.get(kid);
  if (!key) {
    key = importJWK(JSON.parse(openPrivateKey(loaded.stored.privateJwk, deps.config.oidcKeySecret, kid)) as JWK, alg) as Promise<PrivateKey>;
    ring.privateKeys.set(kid, key);
  }
  return key.then((k) => ({ kid, key: k }));
}

/**
 * The JWS of an ID token, signed with the active key of `alg` (created if there is none yet);
 * `typ` is `at+jwt` for an RFC 9068 access token (§2.1), so neither passes for the other.
 */
export async function signJwt(deps: Deps, alg: SigningAlg, claims: JWTPayload, typ: 'JWT' | 'at+jwt' = 'JWT'): Promise<string> {
  let ring = await currentRing(deps);
  let signer = privateKeyOf(deps, ring, alg);
  if (!signer) {
    await ensureSigningKeys(deps);
    ring = await currentRing(deps);
    signer = privateKeyOf(deps, ring, alg);
    if (!signer) throw new Error(`no ${alg} signing key`);
  }
  const { kid, key } = await signer;
  return new SignJWT(claims).setProtectedHeader({ alg, kid, typ }).sign(key);
}

/** RFC 7517 JWK Set of every published key (issue #22 §3): active ones, and retired ones until their tokens have expired. */
export async function jwks(deps: Deps): Promise<{ keys: (JWK & { kid: string; alg: string; use: string; kty: string })[] }> {
  // Read afresh: JWKS requests are rare (clients cache them), and a rotation by another instance
  // or the CLI must be published at once, before any instance signs with the new key.
  let ring = await loadRing(deps, rings.get(deps.db));
  // Published from the first request even before anything was signed (main.ts creates them at start).
  if (SIGNING_ALGS.some((alg) => !activeKey(ring, alg, deps.clock.now()))) {
    await ensureSigningKeys(deps);
    ring = await currentRing(deps);
  }
  return { keys: ring.keys.map((k) => ({ ...k.publicJwk, kid: k.stored.kid, alg: k.stored.alg, use: 'sig', kty: k.publicJwk.kty ?? '' })) };
}

/**
 * The payload of a JWS this server signed, or undefined when it is not one (unknown kid after a
 * fresh read, bad signature, malformed). Expiry is not checked: id_token_hint may be expired
 * (OpenID Connect Core §3.1.2.1; RP-Initiated Logout §2).
 */
export async function verifyOwnJwt(deps: Deps, token: string): Promise<JWTPayload | undefined> {
  let header;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    return undefined;
  }
  if (typeof header.kid !== 'string' || typeof header.alg !== 'string' || !isSigningAlg(header.alg)) return undefined;
  let ring = await currentRing(deps);
  let found = ring.keys.find((k) => k.stored.kid === header.kid);
  // A kid minted by another instance since our last read (issue #22 §3).
  if (!found) {
    ring = await loadRing(deps, ring);
    found = ring.keys.find((k) => k.stored.kid === header.kid);
  }
  if (!found || found.stored.alg !== header.alg) return undefined;
  try {
    const key = await importJWK(found.publicJwk, header.alg);
    const { payload } = await compactVerify(token, key);
    const claims: unknown = JSON.parse(new TextDecoder().decode(payload));
    return claims !== null && typeof claims === 'object' ? (claims as JWTPayload) : undefined;
  } catch {
    return undefined;
  }
}
