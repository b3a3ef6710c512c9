// bench/files.mjs's reference point: node:http with nothing else, taking the same multipart bodies
// Gatehouse takes and serving the same file.
//
//   POST /discard   reads the body and throws it away, then 204
//   POST /to-file   streams the raw body (multipart framing included: no parsing) to a new file
//                   under FILES_DIR, written to {n}.part and renamed when complete as Gatehouse's
//                   fs store does, then 204. The files stay until the run's directory is removed.
//   GET  /file      streams FILE (fs.createReadStream) with content-length; one `bytes=a-b`
//                   range gets 206
import { createReadStream, createWriteStream, rename, statSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream';

const FILES_DIR = process.env.FILES_DIR;
const FILE = process.env.FILE;
let written = 0;

const server = http.createServer((req, res) => {
  if (req.url === '/healthz') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"ok"}');
    return;
  }
  if (req.method === 'POST' && req.url === '/to-file') {
    const name = join(FILES_DIR, String((written += 1)));
    pipeline(req, createWriteStream(`${name}.part`), (error) => {
      if (error) {
        res.writeHead(400);
        res.end();
        return;
      }
      rename(`${name}.part`, name, () => {
        res.writeHead(204);
        res.end();
      });
    });
    return;
  }
  if (req.method === 'GET' && req.url === '/file') {
    const size = statSync(FILE).size;
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '');
    const start = m ? Number(m[1]) : 0;
    const end = m ? Math.min(Number(m[2]), size - 1) : size - 1;
    res.writeHead(m ? 206 : 200, { 'content-type': 'application/octet-stream', 'content-length': String(end - start + 1), ...(m ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}) });
    createReadStream(FILE, { start, end }).pipe(res);
    return;
  }
  req.on('data', () => undefined);
  req.on('end', () => {
    res.writeHead(204);
    res.end();
  });
});
server.keepAliveTimeout = 65_000;
// No request timeout: a 25 MiB body on a busy machine may take a while.
server.requestTimeout = 0;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
