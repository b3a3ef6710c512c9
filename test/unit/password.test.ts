import { describe, expect, it } from 'vitest';
import { DEFAULT_PASSWORD_COST, HashLane, hashPassword, makeDecoyHash, PASSWORD_LANES, verifyPassword } from '../../src/core/password.js';
import { RateLimitedError } from '../../src/core/errors.js';

const CHEAP = { log2N: 10, r: 8, p: 1 };

describe('password hashing (scrypt)', () => {
  it('a hash verifies its password', async () => {
    const stored = await hashPassword('correct horse battery', CHEAP);
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
  });

  it('a wrong password, one differing in case or by a trailing space, does not verify', async () => {
    const stored = await hashPassword('correct horse battery', CHEAP);
    for (const attempt of ['wrong horse battery', 'Correct horse battery', 'correct horse battery ', '']) {
      expect(await verifyPassword(attempt, stored)).toBe(false);
    }
  });

  it('the default parameters are encoded in the hash: scrypt$15$8$1$<salt>$<32-byte key>', async () => {
    const stored = await hashPassword('correct horse battery');
    const [scheme, log2N, r, p, salt, key] = stored.split('$');
    expect(stored.split('$')).toHaveLength(6);
    expect([scheme, Number(log2N), Number(r), Number(p)]).toEqual(['scrypt', DEFAULT_PASSWORD_COST.log2N, DEFAULT_PASSWORD_COST.r, DEFAULT_PASSWORD_COST.p]);
    expect(Buffer.from(salt as string, 'base64url')).toHaveLength(16);
    expect(Buffer.from(key as string, 'base64url')).toHaveLength(32);
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
  });

  it('a hash made with other parameters still verifies, because they travel in the hash', async () => {
    const stored = await hashPassword('correct horse battery', { log2N: 11, r: 4, p: 2 });
    expect(stored.startsWith('scrypt$11$4$2$')).toBe(true);
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
  });

  it('each hash has its own salt, so equal passwords give different hashes', async () => {
    const a = await hashPassword('same password', CHEAP);
    const b = await hashPassword('same password', CHEAP);
    expect(a).not.toBe(b);
    expect(a.split('$')[4]).not.toBe(b.split('$')[4]);
  });

  it('passwords are compared after NFKC normalisation, so composed and decomposed accents match', async () => {
    const stored = await hashPassword('caf\u00e9 au lait', CHEAP);
    expect(await verifyPassword('cafe\u0301 au lait', stored)).toBe(true);
  });

  it('a stored value that is not an scrypt hash never verifies', async () => {
    for (const stored of ['', 'plaintext', 'bcrypt$10$abc', 'scrypt$10$8$1$c2FsdA']) {
      expect(await verifyPassword('plaintext', stored)).toBe(false);
    }
  });

  it('a tampered key does not verify', async () => {
    const stored = await hashPassword('correct horse battery', CHEAP);
    const parts = stored.split('$');
    const key = Buffer.from(parts[5] as string, 'base64url');
    key[0] = (key[0] as number) ^ 1;
    parts[5] = key.toString('base64url');
    expect(await verifyPassword('correct horse battery', parts.join('$'))).toBe(false);
  });

  it('the decoy hash is a well-formed hash that no guessable password matches', async () => {
    const decoy = await makeDecoyHash(CHEAP);
    expect(decoy.startsWith('scrypt$10$8$1$')).toBe(true);
    for (const guess of ['', 'password', 'correct horse battery']) expect(await verifyPassword(guess, decoy)).toBe(false);
  });
});

describe('issue #21 §2: bounded password hashing in two lanes', () => {
  it('a sign-up flood hashes one at a time, and a sign-in started behind 12 queued sign-ups is verified before they are done', async () => {
    const stored = await hashPassword('correct horse battery', CHEAP);
    let created = 0;
    let mostActive = 0;
    const flood = Array.from({ length: 12 }, (_, i) =>
      hashPassword(`flood password ${i}`, CHEAP).then(() => {
        created += 1;
      }),
    );
    const watch = setInterval(() => (mostActive = Math.max(mostActive, PASSWORD_LANES.create.load.active)), 0);
    expect(PASSWORD_LANES.create.load).toEqual({ active: 1, waiting: 11 });
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(created).toBeLessThan(12);
    await Promise.all(flood);
    clearInterval(watch);
    expect(mostActive).toBeLessThanOrEqual(1);
    expect(PASSWORD_LANES.create.load).toEqual({ active: 0, waiting: 0 });
  });

  it('a lane whose queue is full refuses at once instead of growing without bound', async () => {
    const lane = new HashLane(1, 2);
    let release = () => {};
    const running = lane.run(() => new Promise<void>((resolve) => (release = resolve)));
    const queued = [lane.run(async () => 1), lane.run(async () => 2)];
    await expect(lane.run(async () => 3)).rejects.toBeInstanceOf(RateLimitedError);
    release();
    await running;
    expect(await Promise.all(queued)).toEqual([1, 2]);
    expect(lane.load).toEqual({ active: 0, waiting: 0 });
  });
});
