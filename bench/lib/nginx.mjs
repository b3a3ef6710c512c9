// nginx in front of several instances (issue #26 §2): Debian's /usr/sbin/nginx, run as the current
// user with a generated configuration in a temporary directory (pid file, error log and every
// temp path inside it), in the foreground (`daemon off`) as a child of the caller, which stops it.
// One nginx serves several front ends at once, each its own port and upstream group, so that a
// benchmark compares Gatehouse and bare node:http behind the very same proxy.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const NGINX = process.env.NGINX_BIN ?? '/usr/sbin/nginx';

/** Whether nginx can be run here (Debian's package `nginx`); the reason when it cannot. */
export function nginxMissing() {
  return existsSync(NGINX) ? undefined : `${NGINX} not found (Debian's package nginx; NGINX_BIN names another binary)`;
}

/**
 * The configuration text. `frontEnds`: [{ name, port, upstreams: ['127.0.0.1:1234', …] }].
 * Keep-alive both ways: clients keep their connections (as autocannon does), and every worker
 * keeps up to `keepalive` idle connections to the upstreams, so a request through nginx does not
 * pay a TCP handshake to the instance (HTTP/1.1 upstream with the Connection header cleared, as
 * nginx's documentation of `keepalive` requires). POST is never retried on another upstream
 * (nginx's default since 1.9.13): a retried execute could store a message twice.
 */
export function nginxConfig({ dir, frontEnds, workers = 1, keepalive = 64, runAsRoot = process.getuid?.() === 0 }) {
  const L = [];
  // As root, nginx's workers would switch to "nobody", which cannot write the temp paths here.
  if (runAsRoot) L.push('user root root;');
  L.push(
    'daemon off;',
    'master_process on;',
    `worker_processes ${workers};`,
    `pid ${join(dir, 'nginx.pid')};`,
    `error_log ${join(dir, 'error.log')} warn;`,
    'events { worker_connections 8192; multi_accept on; }',
    'http {',
    '  access_log off;',
    `  client_body_temp_path ${join(dir, 'client_body')};`,
    `  proxy_temp_path ${join(dir, 'proxy')};`,
    `  fastcgi_temp_path ${join(dir, 'fastcgi')};`,
    `  uwsgi_temp_path ${join(dir, 'uwsgi')};`,
    `  scgi_temp_path ${join(dir, 'scgi')};`,
    '  keepalive_requests 1000000;',
    '  keepalive_timeout 75s;',
    '  client_max_body_size 8m;',
  );
  for (const f of frontEnds) {
    L.push(`  upstream ${f.name} {`);
    for (const u of f.upstreams) L.push(`    server ${u} max_fails=0;`);
    L.push(`    keepalive ${keepalive};`, '    keepalive_requests 1000000;', '  }');
    L.push(
      '  server {',
      `    listen 127.0.0.1:${f.port} reuseport backlog=4096;`,
      '    location / {',
      `      proxy_pass http://${f.name};`,
      '      proxy_http_version 1.1;',
      '      proxy_set_header Connection "";',
      '      proxy_set_header Host $http_host;',
      '      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;',
      '      proxy_set_header X-Forwarded-Proto $scheme;',
      // Live channel views are event streams: pass them through as they come.
      '      proxy_buffering off;',
      '      proxy_read_timeout 120s;',
      '    }',
      '  }',
    );
  }
  L.push('}');
  return `${L.join('\n')}\n`;
}

function portOpen(port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * Starts nginx with the given front ends and waits until every port accepts connections.
 * Resolves to { dir, pid, frontEnds, stop(), errorLog() }. `stop` asks for a graceful shutdown
 * (SIGQUIT), then SIGKILL after 5 s, and removes the directory.
 */
export async function startNginx({ frontEnds, workers, keepalive } = {}) {
  const missing = nginxMissing();
  if (missing) throw new Error(missing);
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-nginx-'));
  for (const sub of ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, sub));
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConfig({ dir, frontEnds, workers, keepalive }));
  // -e: the error log before the configuration is read (otherwise /var/log/nginx/error.log);
  // -p: the prefix, so that nothing is looked up under /etc/nginx or /var/lib/nginx.
  const child = spawn(NGINX, ['-e', join(dir, 'error.log'), '-p', dir, '-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const errorLog = () => {
    try {
      return readFileSync(join(dir, 'error.log'), 'utf8');
    } catch {
      return '';
    }
  };
  const until = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${output}${errorLog()}`);
    const open = await Promise.all(frontEnds.map((f) => portOpen(f.port)));
    if (open.every(Boolean)) break;
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`nginx did not listen within 10 s: ${output}${errorLog()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  /** PIDs of nginx's master and workers (for CPU accounting), from /proc. */
  const pids = () => {
    const all = [child.pid];
    try {
      const children = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim();
      if (children) all.push(...children.split(/\s+/).map(Number));
    } catch {
      /* no /proc: the master alone */
    }
    return all;
  };
  return {
    dir,
    pid: child.pid,
    pids,
    frontEnds,
    base: (name) => `http://127.0.0.1:${frontEnds.find((f) => f.name === name).port}`,
    errorLog,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGQUIT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
