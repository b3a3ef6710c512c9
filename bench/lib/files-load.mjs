// The load generator of bench/files.mjs: keep-alive connections over raw sockets, one request in
// flight on each. Unlike lib/raw-load.mjs it never gathers a response in memory (an 8 MiB answer
// concatenated chunk by chunk would make the generator, not the server, the bound) and it sends a
// large body as the same prepared Buffer for every request, after a small per-request head.
//
// `requests`: [{ head: Buffer, body?: Buffer }], taken in turn by all connections (webhook URLs
// in round robin). Resolves to the bytes sent and received, answers by status and latencies.
import net from 'node:net';

const CRLF2 = Buffer.from('\r\n\r\n');

/** The head of one HTTP/1.1 request as bytes; `contentLength` adds its header. */
export function requestHead({ method = 'GET', path, host, headers = {}, contentLength }) {
  let head = `${method} ${path} HTTP/1.1\r\nhost: ${host}\r\nconnection: keep-alive\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  if (contentLength !== undefined) head += `content-length: ${contentLength}\r\n`;
  return Buffer.from(`${head}\r\n`, 'latin1');
}

const quantile = (sorted, q) => (sorted.length === 0 ? undefined : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);

/**
 * Runs `connections` connections against `base` until `duration` seconds have passed (requests in
 * flight then are finished and counted: a large upload cut off would count nothing), or until
 * `count` requests have been answered when `count` is given.
 */
export function filesLoad({ base, requests, connections, duration, count }) {
  const url = new URL(base);
  const port = Number(url.port || 80);
  const statusCodes = {};
  const latencies = [];
  let next = 0;
  let started = 0;
  let bytesSent = 0;
  let bodyBytesReceived = 0;
  let errors = 0;
  let firstError;
  const t0 = process.hrtime.bigint();
  const deadline = duration === undefined ? undefined : t0 + BigInt(Math.round(duration * 1e9));
  const more = () => (count !== undefined ? started < count : process.hrtime.bigint() < deadline);

  return new Promise((resolve) => {
    let open = connections;
    const finish = () => {
      open -= 1;
      if (open > 0) return;
      const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
      const sorted = latencies.sort((a, b) => a - b);
      const round = (x) => (x === undefined ? undefined : Math.round(x * 10) / 10);
      resolve({
        seconds,
        answered: latencies.length,
        bytesSent,
        bodyBytesReceived,
        statusCodes,
        errors,
        firstError,
        latency: { p50: round(quantile(sorted, 0.5)), p99: round(quantile(sorted, 0.99)), max: round(sorted.at(-1)) },
      });
    };

    const connection = () => {
      const socket = net.connect({ host: url.hostname, port });
      socket.setNoDelay(true);
      let sentAt = 0n;
      let head = Buffer.alloc(0);
      // Body bytes of the current answer still to come; -1 while its head is being read.
      let remaining = -1;
      let status = 0;
      let done = false;
      const end = () => {
        if (done) return;
        done = true;
        socket.destroy();
        finish();
      };
      const send = () => {
        if (!more()) return end();
        started += 1;
        const r = requests[next++ % requests.length];
        sentAt = process.hrtime.bigint();
        socket.write(r.head);
        bytesSent += r.head.length;
        if (r.body) {
          socket.write(r.body);
          bytesSent += r.body.length;
        }
      };
      const answered = () => {
        latencies.push(Number(process.hrtime.bigint() - sentAt) / 1e6);
        statusCodes[status] = (statusCodes[status] ?? 0) + 1;
        remaining = -1;
        send();
      };
      socket.on('connect', send);
      socket.on('data', (chunk) => {
        let at = 0;
        while (at < chunk.length && !done) {
          if (remaining === -1) {
            const before = head.length;
            head = before === 0 ? chunk.subarray(at) : Buffer.concat([head, chunk.subarray(at)]);
            const headEnd = head.indexOf(CRLF2);
            if (headEnd === -1) return;
            const text = head.toString('latin1', 0, headEnd);
            status = Number(text.slice(9, 12));
            const cl = /\r\ncontent-length:\s*(\d+)/i.exec(text);
            // Gatehouse and the bare servers answer with content-length (or 204, which has none).
            if (!cl && status !== 204 && status !== 304) throw new Error(`answer without content-length: ${text.slice(0, 200)}`);
            remaining = cl ? Number(cl[1]) : 0;
            // The head's bytes that were in this chunk.
            at += headEnd + 4 - before;
            head = Buffer.alloc(0);
            if (remaining === 0) answered();
            continue;
          }
          const take = Math.min(remaining, chunk.length - at);
          remaining -= take;
          bodyBytesReceived += take;
          at += take;
          if (remaining === 0) answered();
        }
      });
      socket.on('error', (e) => {
        errors += 1;
        firstError ??= e.message;
        end();
      });
      socket.on('close', end);
    };
    for (let c = 0; c < connections; c += 1) connection();
  });
}

// Run as a child process of bench/files.mjs (so the generator never shares the orchestrator's
// event loop or its RSS sampling): one process for the whole run, each job over IPC and its figures
// back; it exits when the orchestrator disconnects.
if (process.send && process.argv.includes('--files-load-worker')) {
  process.on('message', async (job) => {
    // One Buffer per distinct body, shared by every request that sends it.
    const bodies = (job.bodies ?? []).map((b) => Buffer.from(b));
    const requests = job.requests.map((r) => ({ head: Buffer.from(r.head), body: r.body === undefined ? undefined : bodies[r.body] }));
    process.send(await filesLoad({ ...job, requests }));
  });
  process.on('disconnect', () => process.exit(0));
  process.send({ ready: true });
}
