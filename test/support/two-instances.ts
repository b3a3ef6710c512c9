import { createTestApp, type TestApp } from './app.js';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from './database.js';
import { freePort } from './ports.js';

/** On PostgreSQL with Redis, two instances of one database; on SQLite, one. */
export const twoInstances = Boolean(TEST_DATABASE_URL && TEST_REDIS_URL);

export interface Instances {
  /** Where the operator acts (the CLI, the fixtures). */
  a: TestApp;
  /** Where the clients talk: a second instance of the same database and Redis, or `a` itself. */
  b: TestApp;
  /** `b`'s base URL (also its GATEHOUSE_BASE_URL, the issuer clients discover). */
  baseUrl: string;
  close(): Promise<void>;
}

/**
 * Issue #39 §Tests ("a disable seen at once by a second instance"): the operator acts through `a`,
 * unmodified clients talk to `b` over real ports, so `b`'s caches must learn a change `a` made at
 * once (through Redis). Resolves once both instances' coherence channels are live.
 */
export async function startInstances(): Promise<Instances> {
  const portA = await freePort();
  const portB = twoInstances ? await freePort() : portA;
  const urlA = `http://127.0.0.1:${portA}`;
  const baseUrl = `http://127.0.0.1:${portB}`;
  const env: Record<string, string> = twoInstances ? { GATEHOUSE_BASE_URL: baseUrl, REDIS_URL: TEST_REDIS_URL as string } : { GATEHOUSE_BASE_URL: baseUrl };
  const a = await createTestApp({ env: twoInstances ? { ...env, GATEHOUSE_BASE_URL: urlA } : env });
  await a.app.listen({ port: portA, host: '127.0.0.1' });
  let b = a;
  if (twoInstances) {
    b = await createTestApp({ env, sameDatabaseAs: a, clock: a.clock });
    await b.app.listen({ port: portB, host: '127.0.0.1' });
    for (let i = 0; i < 200 && !(a.services.coherence?.live() && b.services.coherence?.live()); i++) await new Promise((r) => setTimeout(r, 25));
  }
  return {
    a,
    b,
    baseUrl,
    async close() {
      // fetch (undici) may keep a spare connection open; the server would wait for it on close.
      for (const t of b === a ? [a] : [b, a]) {
        t.app.server.closeAllConnections();
        await t.close();
      }
    },
  };
}
