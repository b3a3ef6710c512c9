import { createServer } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that nobody listened on a moment ago (the OS picks it). Servers that
 * must know their own URL before they start (GATEHOUSE_BASE_URL) are given one of these.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
