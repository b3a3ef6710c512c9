// The reference point of every figure (DESIGN §5): node:http answering 204 after reading the body,
// with nothing else. Measured in the same run, with the same autocannon settings, as the server.
import http from 'node:http';

const server = http.createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    if (req.url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"status":"ok"}');
      return;
    }
    res.writeHead(204);
    res.end();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
