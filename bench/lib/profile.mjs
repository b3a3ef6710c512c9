// Reads a V8 .cpuprofile (node --cpu-prof) and summarises the samples taken inside given time
// windows: self time by function and by where the code lives (our files, each package, node).
import { readFileSync } from 'node:fs';

function place(url) {
  if (!url) return '(native/vm)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm !== -1) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    const pkg = rest[0].startsWith('@') ? 2 : 1;
    return `${rest.slice(0, pkg).join('/')} (${rest.slice(pkg).join('/')})`;
  }
  const src = url.indexOf('/dist/src/');
  if (src !== -1) return `src/${url.slice(src + '/dist/src/'.length).replace(/\.js$/, '.ts')}`;
  if (url.startsWith('node:')) return url;
  return url;
}

/**
 * `windows`: [{ name, start, end }] in microseconds of the monotonic clock (process.hrtime), the
 * clock V8 stamps its samples with on Linux. Returns, per window, the top functions by self time
 * and the share of each place.
 */
export function summariseProfile(file, windows, top = 25) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = (n) => {
    const f = n.callFrame;
    const name = f.functionName || '(anonymous)';
    return f.url ? `${name} ${place(f.url)}:${f.lineNumber + 1}` : name;
  };
  const out = [];
  for (const w of windows) {
    const self = new Map();
    const inclusive = new Map();
    const places = new Map();
    let total = 0;
    let t = profile.startTime;
    for (let i = 0; i < profile.samples.length; i += 1) {
      t += profile.timeDeltas[i];
      if (t < w.start || t > w.end) continue;
      const node = byId.get(profile.samples[i]);
      total += 1;
      const key = keyOf(node);
      self.set(key, (self.get(key) ?? 0) + 1);
      const p = node.callFrame.url ? place(node.callFrame.url) : node.callFrame.functionName;
      places.set(p, (places.get(p) ?? 0) + 1);
      const seen = new Set();
      for (let id = node.id; id !== undefined; id = parent.get(id)) {
        const k = keyOf(byId.get(id));
        if (seen.has(k)) continue;
        seen.add(k);
        inclusive.set(k, (inclusive.get(k) ?? 0) + 1);
      }
    }
    const pct = (n) => Math.round((1000 * n) / Math.max(1, total)) / 10;
    const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, n]) => ({ what: k, percent: pct(n) }));
    out.push({ name: w.name, samples: total, selfByFunction: sorted(self), selfByPlace: sorted(places), inclusive: sorted(inclusive).filter((r) => r.percent < 99) });
  }
  return out;
}

export function profileMarkdown(summaries) {
  const lines = [];
  for (const s of summaries) {
    lines.push(`### ${s.name} (${s.samples} samples)`, '', '| self % | where (by place) |', '|---:|---|');
    for (const r of s.selfByPlace.slice(0, 15)) lines.push(`| ${r.percent} | ${r.what} |`);
    lines.push('', '| self % | function |', '|---:|---|');
    for (const r of s.selfByFunction) lines.push(`| ${r.percent} | \`${r.what}\` |`);
    lines.push('', '| inclusive % | function |', '|---:|---|');
    for (const r of s.inclusive) lines.push(`| ${r.percent} | \`${r.what}\` |`);
    lines.push('');
  }
  return lines.join('\n');
}
