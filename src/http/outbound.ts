import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { BlockList, isIP, isIPv4, type LookupFunction, type Socket } from 'node:net';

/**
 * The one client for outbound requests (DESIGN §4: interactions, app events, client metadata
 * documents, images, anything fetched). Every request has a deadline, follows no redirect, reads
 * at most a capped body, and never reaches a loopback, private, link-local, multicast or otherwise
 * non-public address unless the operator allows it (GATEHOUSE_OUTBOUND_ALLOW_PRIVATE). The address
 * is checked where the connection is made: a custom `lookup` checks every address DNS returns for
 * the socket, and the connected socket's remote address is checked again, so a name that resolves
 * to a public address when checked and a private one when connected (DNS rebinding) gets nowhere.
 * Connections are kept alive and reused (an app's interactions and events go to one host): a
 * pooled socket stays connected to the address that was checked when it was made.
 */

export interface OutboundOptions {
  /** GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: let requests reach loopback and private addresses (tests, a laptop demo). */
  allowPrivate: boolean;
  /** The whole request's deadline, connection to last byte (default 5 s). */
  timeoutMs?: number;
  /** The largest body read (default 1 MiB); a longer one fails with `too-large`. */
  maxBytes?: number;
}

export interface OutboundRequest {
  method?: 'GET' | 'HEAD' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Overrides the client's deadline for this request. */
  timeoutMs?: number;
  /** Overrides the client's body cap for this request. */
  maxBytes?: number;
}

/** An answer as received: a 3xx is returned as it is (its Location never followed). */
export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Why an outbound request produced no answer. Callers map it to their own outcome; it never reaches a client as a 5xx. */
export type OutboundFailure = 'invalid-url' | 'forbidden-address' | 'timeout' | 'too-large' | 'network';

export class OutboundError extends Error {
  constructor(
    readonly reason: OutboundFailure,
    message: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

export interface OutboundClient {
  request(url: string, options?: OutboundRequest): Promise<OutboundResponse>;
  /** Closes the pooled idle connections (the service's shutdown). */
  close(): void;
}

const DEFAULT_TIMEOUT_MS = 5000;
const DEFAULT_MAX_BYTES = 1024 * 1024;
/**
 * How long an idle pooled connection is kept. Below the 5 s idle timeout of Node's and Express's
 * servers (and a server's shorter `Keep-Alive: timeout=` hint wins, as Node's agent reads it), so
 * we close first rather than send into a socket the app is closing.
 */
const IDLE_SOCKET_MS = 4000;

/**
 * Addresses that are not public unicast: IANA's special-purpose registries (RFC 6890 and its
 * updates) for IPv4 and IPv6. IPv4-mapped IPv6 addresses are checked as the IPv4 address they map.
 */
const NOT_PUBLIC = (() => {
  const list = new BlockList();
  const v4: Array<[string, number]> = [
    ['0.0.0.0', 8], // "this network"
    ['10.0.0.0', 8], // private (RFC 1918)
    ['100.64.0.0', 10], // carrier-grade NAT (RFC 6598)
    ['127.0.0.0', 8], // loopback
    ['169.254.0.0', 16], // link-local (cloud metadata services live here)
    ['172.16.0.0', 12], // private
    ['192.0.0.0', 24], // IETF protocol assignments
    ['192.0.2.0', 24], // documentation
    ['192.88.99.0', 24], // 6to4 relay anycast
    ['192.168.0.0', 16], // private
    ['198.18.0.0', 15], // benchmarking
    ['198.51.100.0', 24], // documentation
    ['203.0.113.0', 24], // documentation
    ['224.0.0.0', 4], // multicast
    ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
  ];
  for (const [net, prefix] of v4) list.addSubnet(net, prefix, 'ipv4');
  const v6: Array<[string, number]> = [
    ['::', 96], // unspecified, loopback, and the deprecated IPv4-compatible addresses
    ['64:ff9b::', 96], // NAT64 (checked as its IPv4 address instead, below)
    ['64:ff9b:1::', 48], // local-use NAT64
    ['100::', 64], // discard-only
    ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, documentation's neighbours)
    ['2001:db8::', 32], // documentation
    ['2002::', 16], // 6to4: reaches an IPv4 address of the sender's choosing
    ['fc00::', 7], // unique local (ULA)
    ['fe80::', 10], // link-local
    ['fec0::', 10], // site-local (deprecated)
    ['ff00::', 8], // multicast
  ];
  for (const [net, prefix] of v6) list.addSubnet(net, prefix, 'ipv6');
  return list;
})();

/** The 8 groups of an IPv6 address as numbers, or undefined when it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  // A trailing dotted IPv4 part (::ffff:1.2.3.4) becomes two groups.
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = (dotted[2] as string).split('.').map(Number);
    text = `${dotted[1]}${(((parts[0] as number) << 8) | (parts[1] as number)).toString(16)}:${(((parts[2] as number) << 8) | (parts[3] as number)).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? (halves[0] as string).split(':') : [];
  const tail = halves.length === 2 && halves[1] ? (halves[1] as string).split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail].map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN));
  return groups.some(Number.isNaN) ? undefined : groups;
}

/** The IPv4 address an IPv4-mapped (::ffff:a.b.c.d) or NAT64 (64:ff9b::a.b.c.d) IPv6 address stands for. */
function embeddedIpv4(groups: number[]): string | undefined {
  const g = (i: number) => groups[i] as number;
  const mapped = g(0) === 0 && g(1) === 0 && g(2) === 0 && g(3) === 0 && g(4) === 0 && g(5) === 0xffff;
  const nat64 = g(0) === 0x64 && g(1) === 0xff9b && g(2) === 0 && g(3) === 0 && g(4) === 0 && g(5) === 0;
  if (!mapped && !nat64) return undefined;
  return `${g(6) >> 8}.${g(6) & 0xff}.${g(7) >> 8}.${g(7) & 0xff}`;
}

/**
 * Whether `address` (an IP literal) is anything but a public unicast address: loopback, private,
 * carrier-grade NAT, link-local, multicast, unique local, documentation, reserved. Not an IP: true.
 */
export function isNonPublicAddress(address: string): boolean {
  if (isIPv4(address)) return NOT_PUBLIC.check(address, 'ipv4');
  const groups = ipv6Groups(address);
  if (groups === undefined) return true;
  const v4 = embeddedIpv4(groups);
  if (v4 !== undefined) return NOT_PUBLIC.check(v4, 'ipv4');
  return NOT_PUBLIC.check(groups.map((g) => g.toString(16)).join(':'), 'ipv6');
}

/** A `lookup` for node:net that hands the socket only addresses that pass the check. */
function checkedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 4);
      const usable = allowPrivate ? addresses : addresses.filter((a) => !isNonPublicAddress(a.address));
      if (usable.length === 0) {
        return callback(new OutboundError('forbidden-address', `${hostname} resolves to no public address`) as unknown as NodeJS.ErrnoException, '', 4);
      }
      // net.connect asks for every address with `all` (autoSelectFamily), otherwise for one.
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      const first = usable[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}

/** The client of DESIGN §4; `options` come from the configuration (services.ts). */
export function createOutboundClient(options: OutboundOptions): OutboundClient {
  const lookup = checkedLookup(options.allowPrivate);
  // One pool per client and scheme. `lookup` runs for every new connection, so every socket in the
  // pool was checked when it connected; LIFO keeps the warmest sockets in use and lets the rest expire.
  const agents = {
    'http:': new HttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' }),
    'https:': new HttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS, scheduling: 'lifo' }),
  };
  return {
    request(url, req = {}) {
      return send(url, req, options, lookup, agents);
    },
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

/**
 * Whether a request failed because the pooled socket it was written to had been closed by the
 * server while idle (the race every keep-alive client meets): the socket was reset before any byte
 * of an answer, so the request is sent once more on a new connection (Node's http docs,
 * `request.reusedSocket`). A server that read the request and then reset the connection without
 * answering would see it twice; that is the price of this handling (docs/interactions.md).
 */
function closedWhileIdle(request: ClientRequest, error: NodeJS.ErrnoException, answered: boolean): boolean {
  return request.reusedSocket && !answered && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
}

function send(rawUrl: string, req: OutboundRequest, client: OutboundOptions, lookup: LookupFunction, agents: Record<'http:' | 'https:', HttpAgent>): Promise<OutboundResponse> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return Promise.reject(new OutboundError('invalid-url', 'not an absolute URL'));
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username !== '' || url.password !== '') {
    return Promise.reject(new OutboundError('invalid-url', 'only http and https URLs without credentials are fetched'));
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  // node:net connects to an IP literal without calling `lookup`, so literals are checked here.
  if (isIP(host) !== 0 && !client.allowPrivate && isNonPublicAddress(host)) {
    return Promise.reject(new OutboundError('forbidden-address', 'the address is not public'));
  }
  const timeoutMs = req.timeoutMs ?? client.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = req.maxBytes ?? client.maxBytes ?? DEFAULT_MAX_BYTES;
  const options: RequestOptions = {
    method: req.method ?? 'GET',
    headers: { 'user-agent': 'Gatehouse (outbound)', ...req.headers },
    lookup,
  };
  const make = url.protocol === 'https:' ? httpsRequest : httpRequest;
  const pooled = agents[url.protocol];

  return new Promise<OutboundResponse>((resolve, reject) => {
    let settled = false;
    let request: ClientRequest;
    const fail = (error: OutboundError) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      request.destroy();
      reject(error);
    };
    // One deadline for the request, a resend on a new connection included.
    const deadline = setTimeout(() => fail(new OutboundError('timeout', `no complete answer within ${timeoutMs} ms`)), timeoutMs);
    deadline.unref();

    const attempt = (agent: HttpAgent | false) => {
      let answered = false;
      request = make(url, { ...options, agent }, (response) => {
        answered = true;
        const declared = Number(response.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) return fail(new OutboundError('too-large', `the body is larger than ${maxBytes} bytes`));
        const chunks: Buffer[] = [];
        let length = 0;
        response.on('data', (chunk: Buffer) => {
          length += chunk.length;
          if (length > maxBytes) return fail(new OutboundError('too-large', `the body is larger than ${maxBytes} bytes`));
          chunks.push(chunk);
        });
        response.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(deadline);
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks, length) });
        });
        response.on('error', () => fail(new OutboundError('network', 'the connection failed while reading the answer')));
      });
      // The address actually connected to, checked once more (defence in depth beside `lookup`);
      // a pooled socket was checked when it connected.
      request.on('socket', (socket: Socket) => {
        if (!socket.connecting) return;
        socket.once('connect', () => {
          const remote = socket.remoteAddress;
          if (!client.allowPrivate && (remote === undefined || isNonPublicAddress(remote))) fail(new OutboundError('forbidden-address', 'the address is not public'));
        });
      });
      const sent = request;
      sent.on('error', (error: NodeJS.ErrnoException) => {
        if (settled || sent !== request) return;
        if (agent !== false && closedWhileIdle(sent, error, answered)) return attempt(false);
        fail(error instanceof OutboundError ? error : new OutboundError('network', error.message));
      });
      sent.end(req.body);
    };
    attempt(pooled);
  });
}
