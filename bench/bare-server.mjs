// The reference point of every figure (DESIGN §5): node:http answering 204 after reading the body,
// with nothing else. Measured in the same run, with the same autocannon settings, as the server.
//
// A request may carry `x-bench-spin-us: N`: the server then burns about N µs of its own CPU before
// answering (a fixed number of loop iterations, calibrated against process.cpuUsage() at start, so
// that being descheduled does not shorten the work). bench/lib/instances.mjs uses it as a control:
// work the size of one Gatehouse answer, split across N processes or given to one, shows what this
// machine's cores allow N processes with no shared state at all.
import http from 'node:http';

// Where each loop leaves its last value, so that the engine cannot drop the loop as unused.
let sink = 0;

/** Loop iterations per µs of this process's CPU, measured over 100 ms at start. */
function calibrate() {
  const chunk = 100_000;
  let iterations = 0;
  let x = 1;
  const start = process.cpuUsage();
  let spent = 0;
  while (spent < 100_000) {
    for (let i = 0; i < chunk; i += 1) x = (Math.imul(x, 1103515245) + 12345) | 0;
    iterations += chunk;
    const used = process.cpuUsage(start);
    spent = used.user + used.system;
  }
  sink = x;
  return iterations / spent;
}

const perMicro = calibrate();

function spin(micros) {
  const n = Math.round(micros * perMicro);
  let x = sink | 1;
  for (let i = 0; i < n; i += 1) x = (Math.imul(x, 1103515245) + 12345) | 0;
  sink = x;
}

const server = http.createServer((req, res) => {
  const spinUs = Number(req.headers['x-bench-spin-us'] ?? 0);
  req.on('data', () => undefined);
  req.on('end', () => {
    if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"ok"}');
      return;
    }
    if (spinUs > 0 && spinUs < 1_000_000) spin(spinUs);
    res.writeHead(204);
    res.end();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
