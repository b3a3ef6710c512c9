// The load generator of bench/load-worker.mjs: keep-alive connections over raw sockets, one
// request in flight on each (no pipelining), every request a Buffer built before the clock starts.
//
// Why not autocannon: building each request in its `setupRequest` hook (a new path, bearer token
// or form body per request) made the generator, not the server, bound the figures (issue #43: bare
// node:http measured 37,000 req/s where a plain autocannon run reached 83,000). Its static
// `requests` list is built per connection and every connection walks it from the start, so 50
// connections would send each single-use code or refresh token 50 times. Here one pool of
// prepared buffers is shared by all connections through one cursor: a reusable pool (webhook
// paths, bearer tokens) is cycled, a single-use pool (codes, refresh tokens) is sent once per
// entry and the requests past its end are counted as `reused`.
import net from 'node:net';

const CRLF2 = Buffer.from('\r\n\r\n');

/** One HTTP/1.1 request as bytes: `host` and keep-alive as every client sends them. */
export function requestBuffer({ method = 'GET', path, host, headers = {}, body }) {
  const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  let head = `${method} ${path} HTTP/1.1\r\nhost: ${host}\r\nconnection: keep-alive\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  if (payload !== undefined) head += `content-length: ${payload.length}\r\n`;
  head += '\r\n';
  return payload === undefined ? Buffer.from(head, 'latin1') : Buffer.concat([Buffer.from(head, 'latin1'), payload]);
}

/** The header block of a response as a lower-cased name → value map (only read when asked for). */
function headerMap(head) {
  const out = {};
  for (const line of head.split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) out[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return out;
}

/**
 * Length of a chunked body that starts at `from` in `buf`, through its final CRLF, or -1 while
 * it is incomplete (Gatehouse answers with content-length; this is for whatever does not).
 */
function chunkedEnd(buf, from) {
  let at = from;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', at, 'latin1');
    if (lineEnd === -1) return -1;
    const size = parseInt(buf.toString('latin1', at, lineEnd), 16);
    if (Number.isNaN(size)) throw new Error('malformed chunked response');
    if (size === 0) {
      const end = buf.indexOf('\r\n\r\n', lineEnd, 'latin1');
      return end === -1 ? -1 : end + 4;
    }
    at = lineEnd + 2 + size + 2;
    if (at > buf.length) return -1;
  }
}

/** The value at quantile `q` of sorted `values`. */
const quantile = (sorted, q) => (sorted.length === 0 ? undefined : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);

/**
 * Runs `connections` keep-alive connections against `base` for `duration` seconds.
 * `pool`: Buffers, each one whole request; `once`: each entry is sent at most once (single-use
 * credentials), requests past the end re-send from the start and are counted in `reused`.
 * `onResponse(status, headers)`, when given, gets every answer with its parsed headers.
 * Resolves to the figures load-worker.mjs reports (latency in ms, as autocannon's).
 */
export function rawLoad({ base, pool, once = false, connections, duration, onResponse }) {
  const url = new URL(base);
  const port = Number(url.port || 80);
  const statusCodes = {};
  let next = 0;
  let reused = 0;
  let total = 0;
  let non2xx = 0;
  let errors = 0;
  let latencies = new Float64Array(1 << 16);
  const take = () => {
    const i = next++;
    if (i >= pool.length) {
      if (once) reused += 1;
      return pool[i % pool.length];
    }
    return pool[i];
  };
  const record = (status, ms) => {
    if (total === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[total++] = ms;
    statusCodes[status] = (statusCodes[status] ?? 0) + 1;
    if (status < 200 || status >= 300) non2xx += 1;
  };

  return new Promise((resolve) => {
    let running = true;
    const sockets = [];
    const started = process.hrtime.bigint();

    const open = () => {
      const socket = net.connect({ host: url.hostname, port });
      socket.setNoDelay(true);
      sockets.push(socket);
      let buf = Buffer.alloc(0);
      let sentAt = 0n;
      // Where the current response's body ends, once its header block has been read.
      let expectEnd = -1;
      let status = 0;
      let chunked = false;
      let head = '';
      const send = () => {
        if (!running) return;
        sentAt = process.hrtime.bigint();
        socket.write(take());
      };
      socket.on('connect', send);
      socket.on('data', (chunk) => {
        buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
        for (;;) {
          if (expectEnd === -1) {
            const headEnd = buf.indexOf(CRLF2);
            if (headEnd === -1) return;
            head = buf.toString('latin1', 0, headEnd);
            status = Number(head.slice(9, 12));
            const cl = /\r\ncontent-length:\s*(\d+)/i.exec(head);
            chunked = !cl && /\r\ntransfer-encoding:\s*chunked/i.test(head);
            expectEnd = chunked ? -2 : headEnd + 4 + (cl ? Number(cl[1]) : 0);
            if (chunked) buf = buf.subarray(headEnd + 4);
          }
          let end = expectEnd;
          if (chunked) {
            end = chunkedEnd(buf, 0);
            if (end === -1) return;
          } else if (buf.length < end) return;
          record(status, Number(process.hrtime.bigint() - sentAt) / 1e6);
          if (onResponse) onResponse(status, headerMap(head));
          buf = buf.subarray(end);
          expectEnd = -1;
          send();
          if (buf.length === 0) return;
        }
      });
      socket.on('error', () => {
        errors += 1;
      });
      socket.on('close', () => {
        // The server closed a connection (or it failed): open another while the run lasts.
        if (running) setTimeout(open, 10);
      });
    };
    for (let c = 0; c < connections; c += 1) open();

    setTimeout(() => {
      running = false;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      for (const s of sockets) s.destroy();
      const sorted = latencies.subarray(0, total).sort();
      let sum = 0;
      for (let i = 0; i < total; i += 1) sum += sorted[i];
      const round = (x) => (x === undefined ? undefined : Math.round(x * 100) / 100);
      resolve({
        requestsPerSec: total / seconds,
        totalRequests: total,
        latency: { p50: round(quantile(sorted, 0.5)), p97_5: round(quantile(sorted, 0.975)), p99: round(quantile(sorted, 0.99)), max: round(sorted[total - 1]), mean: round(total ? sum / total : undefined) },
        non2xx,
        errors,
        timeouts: 0,
        statusCodes,
        duration: seconds,
        reused,
      });
    }, duration * 1000);
  });
}
