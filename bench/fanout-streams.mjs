// The stream side of `npm run bench:fanout`, in its own process so that reading the streams never
// shares the server's or the orchestrator's event loop. Opens `count` event streams to `url` with
// `cookie`, reports when every one has received its first block, then counts the `message` events
// and bytes received until told to report. Messages over IPC:
//   in:  {type:'open', url, cookie, count} · {type:'report'} · {type:'close'}
//   out: {type:'opened', refused} · {type:'counts', events, bytes}
import http from 'node:http';

const MARK = '\nevent: message\n';
const streams = [];
let events = 0;
let bytes = 0;

function open(url, cookie) {
  return new Promise((resolve) => {
    const req = http.get(url, { headers: { accept: 'text/event-stream', cookie }, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        return resolve(false);
      }
      res.setEncoding('utf8');
      // The last characters of the previous chunk, so a mark split across two chunks is counted once.
      let tail = '';
      let first = true;
      res.on('data', (chunk) => {
        bytes += Buffer.byteLength(chunk);
        const text = tail + chunk;
        for (let i = text.indexOf(MARK); i !== -1; i = text.indexOf(MARK, i + 1)) events += 1;
        tail = text.slice(-(MARK.length - 1));
        if (first) {
          first = false;
          resolve(true);
        }
      });
      res.on('error', () => undefined);
    });
    req.on('error', () => resolve(false));
    streams.push(req);
  });
}

process.on('message', async (m) => {
  if (m.type === 'open') {
    let refused = 0;
    // A few at a time: opening a thousand at once would measure the connection storm instead.
    for (let i = 0; i < m.count; i += 50) {
      const opened = await Promise.all(Array.from({ length: Math.min(50, m.count - i) }, () => open(m.url, m.cookie)));
      refused += opened.filter((ok) => !ok).length;
    }
    process.send({ type: 'opened', refused });
  } else if (m.type === 'report') {
    process.send({ type: 'counts', events, bytes });
  } else if (m.type === 'close') {
    for (const req of streams) req.destroy();
    process.exit(0);
  }
});
process.send({ type: 'ready' });
