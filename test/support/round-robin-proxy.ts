import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A small HTTP reverse proxy for the scale-out test (issue #7 §3): round robin over N upstreams,
 * as a load balancer in front of several Gatehouse instances would be.
 *
 * Written with node:http and no dependency, so CI needs no nginx (not installed on the CI image;
 * docs/deployment.md has the nginx configuration for production). It does what matters for
 * Gatehouse behind a real load balancer:
 *  - request and response bodies are streamed, never buffered, so server-sent events
 *    (`text/event-stream`, the live channel view) pass through as each event is written;
 *  - `X-Forwarded-For` (appended to), `X-Forwarded-Proto` and `X-Forwarded-Host` are set, and the
 *    client's `Host` is kept, like nginx's `proxy_set_header Host $host`;
 *  - hop-by-hop headers (RFC 9110 §7.6.1) are not forwarded in either direction;
 *  - an upstream that refuses the connection or fails before answering gets the client a 502.
 *
 * Every request is recorded with the upstream that served it, and the response carries
 * `X-Upstream: <index>` (added by the proxy, not the app), so a test can assert the spread.
 */

/** One proxied request, as recorded. */
export interface ProxiedRequest {
  /** 1, 2, 3… in arrival order. */
  seq: number;
  method: string;
  /** The path without its query string (queries carry codes and state). */
  path: string;
  /** Index into the upstream list. */
  upstream: number;
  /** The upstream's status, or 502 when it could not be reached. */
  status: number;
  /** Milliseconds until the response headers were sent. */
  headersMs: number;
}

export interface RoundRobinProxy {
  /** e.g. http://127.0.0.1:41234 */
  readonly url: string;
  readonly port: number;
  /** Every request so far, in arrival order (status filled in once the upstream answered). */
  readonly requests: readonly ProxiedRequest[];
  /** Replaces the upstream list (base URLs such as http://127.0.0.1:8081); the rotation restarts. */
  setUpstreams(upstreams: string[]): void;
  /** Requests per upstream index so far. */
  counts(): number[];
  close(): Promise<void>;
}

/** The response header naming the upstream that served a request. */
export const UPSTREAM_HEADER = 'x-upstream';

// RFC 9110 §7.6.1: meaningful for one connection only.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

function forwardable(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  );
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    out[name] = value;
  }
  return out;
}

function clientAddress(socket: Socket): string {
  const address = socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/** Starts the proxy on 127.0.0.1 (port 0: the OS picks one). Upstreams may be set later. */
export async function startRoundRobinProxy(options: { upstreams?: string[]; port?: number; host?: string } = {}): Promise<RoundRobinProxy> {
  const host = options.host ?? '127.0.0.1';
  let upstreams: URL[] = (options.upstreams ?? []).map((u) => new URL(u));
  let next = 0;
  const requests: ProxiedRequest[] = [];
  // Keep-alive to the upstreams, as nginx's `keepalive` would; a streaming response holds its socket.
  const agent = new Agent({ keepAlive: true });

  function badGateway(res: ServerResponse, index: number, detail: string): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const body = `502 Bad Gateway: upstream ${index} ${detail}\n`;
    res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), [UPSTREAM_HEADER]: String(index) });
    res.end(body);
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const started = performance.now();
    const record: ProxiedRequest = { seq: requests.length + 1, method: req.method ?? 'GET', path: (req.url ?? '/').split('?')[0] ?? '/', upstream: -1, status: 0, headersMs: 0 };
    requests.push(record);
    if (upstreams.length === 0) {
      record.status = 502;
      badGateway(res, -1, 'none configured');
      return;
    }
    const index = next % upstreams.length;
    next += 1;
    record.upstream = index;
    const target = upstreams[index] as URL;

    const headers = forwardable(req.headers);
    const forwardedFor = req.headers['x-forwarded-for'];
    const address = clientAddress(req.socket);
    headers['x-forwarded-for'] = forwardedFor ? `${String(forwardedFor)}, ${address}` : address;
    headers['x-forwarded-proto'] = 'http';
    if (req.headers.host) headers['x-forwarded-host'] = req.headers.host;

    const upstreamReq = httpRequest({ protocol: target.protocol, hostname: target.hostname, port: target.port, method: req.method, path: req.url, headers, agent });
    upstreamReq.on('response', (upstreamRes) => {
      record.status = upstreamRes.statusCode ?? 502;
      record.headersMs = performance.now() - started;
      const responseHeaders = forwardable(upstreamRes.headers);
      responseHeaders[UPSTREAM_HEADER] = String(index);
      res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.statusMessage, responseHeaders);
      // Headers go out now, before any body: an event stream's client sees the 200 at once.
      res.flushHeaders();
      upstreamRes.on('data', (chunk: Buffer) => {
        // Each chunk is written as it arrives (no buffering: server-sent events stay live);
        // back-pressure pauses the upstream while the client is slow.
        if (!res.write(chunk)) {
          upstreamRes.pause();
          res.once('drain', () => upstreamRes.resume());
        }
      });
      upstreamRes.on('end', () => res.end());
      upstreamRes.on('error', () => res.destroy());
      upstreamRes.on('aborted', () => res.destroy());
    });
    upstreamReq.on('error', (error: NodeJS.ErrnoException) => {
      if (record.status === 0) record.status = 502;
      badGateway(res, index, error.code ?? error.message);
    });
    // The client went away (a closed event stream, an aborted fetch): stop the upstream request too.
    res.on('close', () => {
      if (!res.writableFinished) upstreamReq.destroy();
    });
    req.pipe(upstreamReq);
  }

  const server: Server = createServer(handle);
  server.requestTimeout = 0; // long-lived event streams
  server.on('connection', (socket: Socket) => socket.setNoDelay(true));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://${host}:${port}`,
    port,
    requests,
    setUpstreams(list: string[]) {
      upstreams = list.map((u) => new URL(u));
      next = 0;
    },
    counts() {
      const counts = upstreams.map(() => 0);
      for (const r of requests) if (r.upstream >= 0 && r.upstream < counts.length) counts[r.upstream] = (counts[r.upstream] ?? 0) + 1;
      return counts;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}
