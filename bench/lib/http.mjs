// A small keep-alive HTTP client for seeding (not for measuring: autocannon does that in its own process).
import http from 'node:http';

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/**
 * One request to the server under test. `body` may be a string or an object (sent as JSON);
 * `form` is sent as application/x-www-form-urlencoded. Resolves to { status, headers, text, json() }.
 */
export function request(base, { method = 'GET', path, headers = {}, body, form }) {
  const url = new URL(path, base);
  let payload;
  const sendHeaders = { ...headers };
  if (form !== undefined) {
    payload = new URLSearchParams(form).toString();
    sendHeaders['content-type'] = 'application/x-www-form-urlencoded';
  } else if (body !== undefined) {
    payload = typeof body === 'string' ? body : JSON.stringify(body);
    sendHeaders['content-type'] ??= 'application/json';
  }
  if (payload !== undefined) sendHeaders['content-length'] = Buffer.byteLength(payload);
  return new Promise((resolve, reject) => {
    const req = http.request({ agent, host: url.hostname, port: url.port, method, path: url.pathname + url.search, headers: sendHeaders }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode, headers: res.headers, text, json: () => JSON.parse(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** A cookie jar for one browser-like session: keeps every Set-Cookie by name. */
export class CookieJar {
  cookies = new Map();
  store(setCookie) {
    for (const line of [setCookie ?? []].flat()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header() {
    return [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; ');
  }
}

/** Runs `fn` over `items` with at most `concurrency` at a time; returns the results in order. */
export async function pool(items, concurrency, fn) {
  const results = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  });
  await Promise.all(workers);
  return results;
}

const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
function decodeEntities(text) {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (m, e) => {
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    return ENTITIES[e.toLowerCase()] ?? m;
  });
}

function attributes(tag) {
  const attrs = {};
  for (const m of tag.matchAll(/([a-zA-Z_:-]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g)) {
    attrs[m[1].toLowerCase()] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? '');
  }
  return attrs;
}

/**
 * What a browser would submit from the first POST form of a page whose action contains
 * `actionPart`: hidden and text inputs, checked checkboxes, selected options (or the first), and
 * the named submit button `button` ({ name, value }). Returns { action, fields: [[name, value], …] }.
 */
export function formFields(html, actionPart, button) {
  for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)) {
    const attrs = attributes(m[1]);
    if ((attrs.method ?? 'get').toLowerCase() !== 'post') continue;
    if (actionPart && !(attrs.action ?? '').includes(actionPart)) continue;
    const fields = [];
    for (const input of m[2].matchAll(/<input\b([^>]*)>/gi)) {
      const a = attributes(input[1]);
      if (!a.name) continue;
      const type = (a.type ?? 'text').toLowerCase();
      if (type === 'checkbox' || type === 'radio') {
        if ('checked' in a) fields.push([a.name, a.value ?? 'on']);
      } else if (type !== 'submit' && type !== 'button') fields.push([a.name, a.value ?? '']);
    }
    for (const select of m[2].matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/gi)) {
      const a = attributes(select[1]);
      const options = [...select[2].matchAll(/<option\b([^>]*)>/gi)].map((o) => attributes(o[1]));
      const chosen = options.find((o) => 'selected' in o) ?? options.find((o) => o.value);
      if (a.name && chosen) fields.push([a.name, chosen.value ?? '']);
    }
    if (button) fields.push([button.name, button.value]);
    return { action: attrs.action ?? '', fields };
  }
  return undefined;
}
