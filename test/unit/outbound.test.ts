import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboundClient, isNonPublicAddress, OutboundError, type OutboundFailure } from '../../src/http/outbound.js';

/** DESIGN §4: the one outbound client (issue #36 §4). */

describe('isNonPublicAddress: only public unicast addresses may be reached', () => {
  it.each([
    '127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '198.18.0.1',
    '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '64:ff9b::a00:1', '2001:db8::1', '2002:7f00:1::1', 'not an address',
  ])('%s is not public', (address) => {
    expect(isNonPublicAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '::ffff:8.8.8.8', '64:ff9b::808:808'])('%s is public', (address) => {
    expect(isNonPublicAddress(address)).toBe(false);
  });
});

describe('createOutboundClient', () => {
  let server: Server;
  let port: number;
  const hits: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/redirect') return res.writeHead(302, { location: '/elsewhere' }).end();
      if (req.url === '/large') return res.writeHead(200).end(Buffer.alloc(2048));
      if (req.url === '/silent') return; // never answers
      res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const reason = async (promise: Promise<unknown>): Promise<OutboundFailure | 'resolved'> =>
    promise.then(
      () => 'resolved' as const,
      (error: unknown) => (error instanceof OutboundError ? error.reason : (`not an OutboundError: ${String(error)}` as OutboundFailure)),
    );

  it('refuses loopback by IP literal and by a name that resolves to it, before any request is sent, unless allowed', async () => {
    const strict = createOutboundClient({ allowPrivate: false });
    const before = hits.length;
    for (const host of ['127.0.0.1', 'localhost', '[::1]', '[::ffff:127.0.0.1]']) {
      expect(await reason(strict.request(`http://${host}:${port}/`)), host).toBe('forbidden-address');
    }
    expect(hits.length).toBe(before);
    const lenient = createOutboundClient({ allowPrivate: true });
    const answer = await lenient.request(`http://localhost:${port}/`);
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe('hello');
  });

  it('follows no redirect: the 3xx is the answer and its Location is never requested', async () => {
    const client = createOutboundClient({ allowPrivate: true });
    const answer = await client.request(`http://127.0.0.1:${port}/redirect`);
    expect(answer.status).toBe(302);
    expect(hits).not.toContain('/elsewhere');
  });

  it('cuts a body beyond its cap, times out a silent server, and takes only http(s) URLs without credentials', async () => {
    const client = createOutboundClient({ allowPrivate: true, maxBytes: 1024 });
    expect(await reason(client.request(`http://127.0.0.1:${port}/large`))).toBe('too-large');
    expect((await client.request(`http://127.0.0.1:${port}/large`, { maxBytes: 4096 })).body.length).toBe(2048);
    // A short deadline only where nothing will ever arrive, so a busy machine cannot make the other cases time out.
    expect(await reason(client.request(`http://127.0.0.1:${port}/silent`, { timeoutMs: 200 }))).toBe('timeout');
    for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'http://user:pass@127.0.0.1/', 'not a url']) {
      expect(await reason(client.request(url)), url).toBe('invalid-url');
    }
  });
});

describe('createOutboundClient keeps connections alive (issue #40: an app’s interactions and events go to one host)', () => {
  let server: Server;
  let port: number;
  let connections: Socket[] = [];
  /** The sockets that have answered once; the handler below closes them at their next request when asked to. */
  const served = new WeakSet<Socket>();
  let closeReusedSockets = false;
  const received: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        // The app closing a kept-alive connection just as a request is written to it.
        if (closeReusedSockets && served.has(req.socket)) return req.socket.destroy();
        received.push(body);
        served.add(req.socket);
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`got ${body}`);
      });
    });
    server.on('connection', (socket: Socket) => connections.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends successive requests to one host over one connection, and close() ends it', async () => {
    connections = [];
    closeReusedSockets = false;
    const client = createOutboundClient({ allowPrivate: true });
    for (const body of ['one', 'two', 'three']) {
      const answer = await client.request(`http://127.0.0.1:${port}/`, { method: 'POST', body });
      expect(answer.body.toString()).toBe(`got ${body}`);
    }
    expect(connections.length).toBe(1);
    client.close();
    await expect.poll(() => (connections[0] as Socket).destroyed).toBe(true);
  });

  it('sends a request once more, on a new connection, when the app closed the idle connection it was written to', async () => {
    connections = [];
    received.length = 0;
    closeReusedSockets = true;
    const client = createOutboundClient({ allowPrivate: true });
    try {
      expect((await client.request(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'first' })).status).toBe(200);
      const answer = await client.request(`http://127.0.0.1:${port}/`, { method: 'POST', body: 'second' });
      expect(answer.status).toBe(200);
      expect(answer.body.toString()).toBe('got second');
      // The kept connection was closed under the second request; it went again on a second connection.
      expect(connections.length).toBe(2);
      expect(received).toEqual(['first', 'second']);
    } finally {
      client.close();
    }
  });
});

describe('GATEHOUSE_OUTBOUND_ALLOW_PRIVATE', () => {
  it('is off by default, on with true or 1, and anything else is a configuration error', async () => {
    const { loadConfig, ConfigError } = await import('../../src/config/config.js');
    expect(loadConfig({}).outboundAllowPrivate).toBe(false);
    expect(loadConfig({ GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'true' }).outboundAllowPrivate).toBe(true);
    expect(loadConfig({ GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: '1' }).outboundAllowPrivate).toBe(true);
    expect(() => loadConfig({ GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'yes' })).toThrow(ConfigError);
  });
});
