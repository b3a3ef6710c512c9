// The reference point of `npm run bench:fanout` (DESIGN §5): node:http holding server-sent event
// streams and, for every POST, writing one event of FANOUT_FRAME_BYTES to each of them, with
// nothing else: no rendering, no database. What a stream costs here is the floor, the bytes written.
//
//   GET  …/events  a text/event-stream that stays open
//   POST anything  the body is read, one event goes to every open stream, 204
//   GET  /healthz  200
import http from 'node:http';

const bytes = Number(process.env.FANOUT_FRAME_BYTES ?? 2000);
// One event of about that size: "event: message\ndata: xxx…\n\n".
const frame = `event: message\ndata: ${'x'.repeat(Math.max(1, bytes - 23))}\n\n`;
const streams = new Set();

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url.split('?')[0].endsWith('/events')) {
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
    res.write('retry: 3000\n\n');
    streams.add(res);
    res.on('close', () => streams.delete(res));
    return;
  }
  if (req.method === 'POST') {
    req.resume();
    req.on('end', () => {
      for (const stream of streams) stream.write(frame);
      res.writeHead(204);
      res.end();
    });
    return;
  }
  res.writeHead(req.url === '/healthz' ? 200 : 404, { 'content-type': 'text/plain' });
  res.end(req.url === '/healthz' ? 'ok' : 'not found');
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => {
  for (const stream of streams) stream.destroy();
  server.close(() => process.exit(0));
});
