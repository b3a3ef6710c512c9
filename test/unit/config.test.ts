import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readOrCreateSecretFile } from '../../src/config/server-secret.js';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';

describe('configuration (DESIGN §8)', () => {
  it('has working defaults for a fresh machine: port 8080, SQLite under ./data', () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    expect(c.host).toBe('127.0.0.1');
    expect(c.baseUrl).toBe('http://localhost:8080');
    expect(c.databaseUrl).toBe('./data/gatehouse.db');
    expect(c.redisUrl).toBeUndefined();
    expect(c.serviceName).toBe('Gatehouse');
    expect(c.secureCookies).toBe(false);
  });

  it('derives the base URL from PORT and strips a trailing slash', () => {
    expect(loadConfig({ PORT: '9000' }).baseUrl).toBe('http://localhost:9000');
    expect(loadConfig({ GATEHOUSE_BASE_URL: 'https://auth.example.com/' }).baseUrl).toBe('https://auth.example.com');
    expect(loadConfig({ GATEHOUSE_BASE_URL: 'https://auth.example.com/' }).secureCookies).toBe(true);
  });

  it('lists every violation at once', () => {
    try {
      loadConfig({ PORT: 'eighty', GATEHOUSE_BASE_URL: 'not a url', LOG_LEVEL: 'loud', REDIS_URL: 'http://x' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems;
      expect(problems).toHaveLength(4);
      expect(problems.join('\n')).toMatch(/PORT/);
      expect(problems.join('\n')).toMatch(/GATEHOUSE_BASE_URL/);
      expect(problems.join('\n')).toMatch(/LOG_LEVEL/);
      expect(problems.join('\n')).toMatch(/REDIS_URL/);
    }
  });

  it('refuses a base URL with a query or fragment (RFC 8414 §2: the issuer has none)', () => {
    expect(() => loadConfig({ GATEHOUSE_BASE_URL: 'https://a.example/?x=1' })).toThrow(ConfigError);
    expect(() => loadConfig({ GATEHOUSE_BASE_URL: 'https://a.example/#f' })).toThrow(ConfigError);
  });

  it('GATEHOUSE_DURABILITY is normal by default, strict on request, and nothing else', () => {
    expect(loadConfig({}).durability).toBe('normal');
    expect(loadConfig({ GATEHOUSE_DURABILITY: 'strict' }).durability).toBe('strict');
    expect(() => loadConfig({ GATEHOUSE_DURABILITY: 'paranoid' })).toThrow(/GATEHOUSE_DURABILITY must be normal or strict/);
  });

  it('request and header timeouts: 30 s and 10 s by default, configurable, headers never longer than the request (issue #21 §1)', () => {
    expect(loadConfig({}).requestTimeoutMs).toBe(30_000);
    expect(loadConfig({}).headersTimeoutMs).toBe(10_000);
    const c = loadConfig({ GATEHOUSE_REQUEST_TIMEOUT_MS: '60000', GATEHOUSE_HEADERS_TIMEOUT_MS: '5000' });
    expect([c.requestTimeoutMs, c.headersTimeoutMs]).toEqual([60_000, 5000]);
    expect(() => loadConfig({ GATEHOUSE_REQUEST_TIMEOUT_MS: '0' })).toThrow(/GATEHOUSE_REQUEST_TIMEOUT_MS must be a whole number/);
    expect(() => loadConfig({ GATEHOUSE_REQUEST_TIMEOUT_MS: '5000', GATEHOUSE_HEADERS_TIMEOUT_MS: '6000' })).toThrow(/must not exceed GATEHOUSE_REQUEST_TIMEOUT_MS/);
  });

  it('live streams: 10 per person and 100 per address by default, configurable, 0 for no cap, nothing else (issue #36 §1)', () => {
    expect([loadConfig({}).liveStreamsPerPerson, loadConfig({}).liveStreamsPerAddress]).toEqual([10, 100]);
    const c = loadConfig({ GATEHOUSE_LIVE_STREAMS_PER_PERSON: '3', GATEHOUSE_LIVE_STREAMS_PER_ADDRESS: '0' });
    expect([c.liveStreamsPerPerson, c.liveStreamsPerAddress]).toEqual([3, 0]);
    expect(() => loadConfig({ GATEHOUSE_LIVE_STREAMS_PER_PERSON: '-1' })).toThrow(/GATEHOUSE_LIVE_STREAMS_PER_PERSON must be a whole number/);
    expect(() => loadConfig({ GATEHOUSE_LIVE_STREAMS_PER_ADDRESS: 'many' })).toThrow(/GATEHOUSE_LIVE_STREAMS_PER_ADDRESS must be a whole number/);
  });

  it('reads trusted proxies as a list', () => {
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1, 10.0.0.2' }).trustProxy).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(loadConfig({}).trustProxy).toBe(false);
  });
});

describe('issue #21 §5: the server secret', () => {
  it('GATEHOUSE_SECRET is a comma-separated list of secrets of at least 32 characters; unset, the secret file is used', () => {
    const a = 'a'.repeat(32);
    const b = 'b'.repeat(40);
    expect(loadConfig({ GATEHOUSE_SECRET: `${a}, ${b}` }).secrets).toEqual([a, b]);
    expect(loadConfig({}).secrets).toEqual([]);
    expect(loadConfig({}).secretFile).toBe('./data/gatehouse.secret');
    expect(() => loadConfig({ GATEHOUSE_SECRET: 'short' })).toThrow(/GATEHOUSE_SECRET must be at least 32 characters/);
  });

  it('the secret file is created once with 256 random bits, readable by its owner only, and read back on later starts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-secret-'));
    try {
      const file = join(dir, 'nested', 'gatehouse.secret');
      const first = readOrCreateSecretFile(file);
      expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readOrCreateSecretFile(file)).toBe(first);
      expect(readdirSync(join(dir, 'nested'))).toEqual(['gatehouse.secret']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('issue #36 §4: DATABASE_URL names a database Gatehouse speaks', () => {
  it('an unknown scheme (mysql://x/y) is a configuration error listed with the others, not a SQLite file in ./mysql:/x/', () => {
    try {
      loadConfig({ DATABASE_URL: 'mysql://gatehouse:hunter2@db/y', PORT: 'eighty' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems;
      expect(problems).toHaveLength(2);
      expect(problems).toContain('DATABASE_URL must be a postgres:// or postgresql:// URL, a sqlite: URL or a file path (got a "mysql:" URL)');
      // The rest of the URL may hold a password: it is not echoed.
      expect(problems.join('\n')).not.toContain('hunter2');
    }
    for (const url of ['mariadb://x/y', 'file:./x.db', 'POSTGRES://db/x', 'postgres:db']) {
      expect(() => loadConfig({ DATABASE_URL: url }), url).toThrow(/DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/);
    }
  });

  it('accepts PostgreSQL URLs, sqlite: URLs, :memory: and file paths (a Windows drive letter included)', () => {
    for (const url of ['postgres://u@db/x', 'postgresql://u@db/x', 'sqlite:./x.db', 'sqlite:///var/lib/x.db', 'sqlite::memory:', ':memory:', './data/x.db', '/var/lib/gatehouse/x.db', 'x.db', 'C:\\gatehouse\\x.db']) {
      expect(loadConfig({ DATABASE_URL: url }).databaseUrl, url).toBe(url);
    }
  });
});
