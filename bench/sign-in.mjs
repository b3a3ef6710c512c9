#!/usr/bin/env node
// The sign-in benchmark (issue #38, "Tests and benchmark"): what a second factor adds to a sign-in,
// and whether a page that sends mail ever waits on the mail server.
//
//  1. Server CPU per sign-in (µs, from /proc of the server process), through the pages as a
//     browser goes: a password sign-in is GET /login + POST /login; a password + TOTP sign-in is
//     GET /login + POST /login + GET /login/second-factor + POST /login/second-factor. Both are
//     measured in alternating rounds on the same server, so drift of the machine falls on both.
//     The password's scrypt dominates both; the target is TOTP's figure within 5 % of the
//     password's.
//  2. A mail sink (smtp-server) that answers each mail only after --smtp-delay ms (default
//     3,000): "Forgot password?" and a sign-up with an e-mail address are timed while the sink is
//     that slow. Mail is queued in the database and sent by the worker (docs/mail.md), so these
//     answers take the time of the page, not of the mail server; the mails reaching the sink later
//     show the worker did send them.
//
// Usage: npm run bench:sign-in [-- --rounds 3 --per-round 40 --smtp-delay 3000 --smoke --no-build]
//   --smoke        one round of 6 sign-ins each and one mail; nothing judged (CI: cannot rot)
//   --no-build     use the existing dist/
//   --postgres     PostgreSQL (BENCH_POSTGRES_URL) + Redis instead of the default SQLite
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as OTPAuth from 'otpauth';
import { SMTPServer } from 'smtp-server';
import { freshDatabase } from './lib/database.mjs';
import { CookieJar, formFields, pool, request } from './lib/http.mjs';
import { ROOT, cpuMicros, startServer } from './lib/processes.mjs';
import { cliBatch } from './lib/seed.mjs';

const PASSWORD = 'bench-password-0123';
const CONCURRENCY = 4;

function parseArgs(argv) {
  const o = { rounds: 3, perRound: 40, smtpDelay: 3000, smoke: false, build: true, postgres: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--rounds') o.rounds = Number(argv[++i]);
    else if (a === '--per-round') o.perRound = Number(argv[++i]);
    else if (a === '--smtp-delay') o.smtpDelay = Number(argv[++i]);
    else if (a === '--smoke') o.smoke = true;
    else if (a === '--no-build') o.build = false;
    else if (a === '--postgres') o.postgres = true;
    else throw new Error(`unknown argument ${a}`);
  }
  if (o.smoke) Object.assign(o, { rounds: 1, perRound: 6 });
  if (!(o.rounds >= 1 && o.perRound >= 1 && o.smtpDelay >= 0)) throw new Error('--rounds and --per-round must be ≥ 1, --smtp-delay ≥ 0');
  return o;
}

const log = (line) => process.stderr.write(`${line}\n`);

/** A mail server that takes `delayMs` to accept each mail (STARTTLS and AUTH not offered: plain SMTP on loopback). */
async function startSlowSink(delayMs) {
  const received = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () => setTimeout(() => (received.push(Date.now()), callback()), delayMs));
    },
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `smtp://127.0.0.1:${server.server.address().port}`, received, stop: () => new Promise((resolve) => server.close(resolve)) };
}

/** One browser-like page visit and form post; returns the POST's answer. */
async function submit(base, jar, pagePath, actionPart, values) {
  const page = await request(base, { path: pagePath, headers: { cookie: jar.header() } });
  jar.store(page.headers['set-cookie']);
  const form = formFields(page.text, actionPart);
  if (!form) throw new Error(`no form posting to ${actionPart} on ${pagePath} (${page.status})`);
  const fields = new Map(form.fields);
  for (const [k, v] of Object.entries(values)) fields.set(k, v);
  const res = await request(base, { method: 'POST', path: form.action, headers: { cookie: jar.header() }, form: [...fields] });
  jar.store(res.headers['set-cookie']);
  return res;
}

function codeFor(secret, timestamp = Date.now()) {
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp });
}

async function passwordSignIn(base, username) {
  const jar = new CookieJar();
  const res = await submit(base, jar, '/login', '/login', { username, password: PASSWORD });
  if (res.status !== 303 || res.headers.location === '/login/second-factor') throw new Error(`password sign-in of ${username}: ${res.status} → ${res.headers.location}`);
  return jar;
}

async function totpSignIn(base, person) {
  const jar = new CookieJar();
  const first = await submit(base, jar, '/login', '/login', { username: person.username, password: PASSWORD });
  if (first.status !== 303 || first.headers.location !== '/login/second-factor') throw new Error(`TOTP sign-in of ${person.username}: the password step answered ${first.status} → ${first.headers.location}`);
  const second = await submit(base, jar, '/login/second-factor', '/login/second-factor', { code: codeFor(person.secret, Math.max(Date.now(), person.enrolledAt + 30_000)) });
  if (second.status !== 303) throw new Error(`TOTP sign-in of ${person.username}: the code step answered ${second.status}`);
  return jar;
}

/** Enrols TOTP through Settings → Security as the person would; returns the text secret. */
async function enrolTotp(base, username) {
  const jar = await passwordSignIn(base, username);
  const started = await submit(base, jar, '/settings/security', '/settings/security/totp', {});
  const secret = /class="secret">([A-Z2-7 ]+)</.exec(started.text)?.[1]?.replace(/ /g, '');
  if (!secret) throw new Error(`no TOTP secret on the enrolment page for ${username} (${started.status})`);
  const form = formFields(started.text, '/settings/security/totp/confirm');
  const fields = new Map(form.fields);
  fields.set('code', codeFor(secret));
  const confirmed = await request(base, { method: 'POST', path: form.action, headers: { cookie: jar.header() }, form: [...fields] });
  if (confirmed.status !== 200) throw new Error(`TOTP confirmation for ${username}: ${confirmed.status}`);
  return secret;
}

/** Server CPU (µs) spent while `fn` runs, and fn's result. */
async function measured(pid, fn) {
  const before = cpuMicros(pid);
  const started = process.hrtime.bigint();
  const result = await fn();
  const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
  const after = cpuMicros(pid);
  return { cpuUs: after.user + after.system - (before.user + before.system), wallMs, result };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const percentile = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.build) execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  const dir = mkdtempSync(join(tmpdir(), 'gh-bench-sign-in-'));
  const db = await freshDatabase(opts, dir);
  const sink = await startSlowSink(opts.smtpDelay);
  const env = { ...db.env, GATEHOUSE_SMTP_URL: sink.url, GATEHOUSE_MAIL_FROM: 'Gatehouse <gatehouse@bench.example>' };
  let server;
  try {
    // Each TOTP sign-in uses a person once (a code works once: RFC 6238 §5.2), so there are as
    // many TOTP people as TOTP sign-ins; password people sign in again and again.
    const totpCount = opts.rounds * opts.perRound;
    const passwordPeople = Array.from({ length: 8 }, (_, i) => `pw.person.${i}`);
    // The enrolment used each person's code of its 30-second step, so a sign-in soon after uses
    // the next step's code, as an authenticator whose clock runs a little ahead would (the server
    // accepts one step either side; RFC 6238 §5.2).
    const totpPeople = Array.from({ length: totpCount }, (_, i) => ({ username: `totp.person.${i}`, secret: '', enrolledAt: 0 }));
    const mailPeople = Array.from({ length: opts.smoke ? 1 : 5 }, (_, i) => `mail.person.${i}`);
    log(`seeding ${passwordPeople.length + totpPeople.length + mailPeople.length} people through gatehouse batch`);
    await cliBatch(env, [
      ...[...passwordPeople, ...totpPeople.map((p) => p.username)].map((u) => `people create --username ${u} --password "${PASSWORD}"`),
      ...mailPeople.flatMap((u) => [`people create --username ${u} --password "${PASSWORD}" --email ${u}@bench.example`, `people verify-email --username ${u}`]),
    ]);
    server = await startServer(env);
    log(`enrolling TOTP for ${totpPeople.length} people through Settings → Security`);
    await pool(totpPeople, CONCURRENCY, async (p) => {
      p.secret = await enrolTotp(server.base, p.username);
      p.enrolledAt = Date.now();
    });
    // Warm-up: both paths once, unmeasured.
    await passwordSignIn(server.base, passwordPeople[0]);

    const rounds = [];
    let next = 0;
    for (let r = 0; r < opts.rounds; r++) {
      const batch = totpPeople.slice(next, next + opts.perRound);
      next += opts.perRound;
      const pw = await measured(server.pid, () => pool(Array.from({ length: opts.perRound }, (_, i) => passwordPeople[i % passwordPeople.length]), CONCURRENCY, (u) => passwordSignIn(server.base, u)));
      const totp = await measured(server.pid, () => pool(batch, CONCURRENCY, (p) => totpSignIn(server.base, p)));
      const row = { round: r + 1, passwordUs: pw.cpuUs / opts.perRound, totpUs: totp.cpuUs / opts.perRound, passwordWallMs: pw.wallMs / opts.perRound, totpWallMs: totp.wallMs / opts.perRound };
      rounds.push(row);
      log(`round ${row.round}: password ${row.passwordUs.toFixed(0)} µs CPU per sign-in, password + TOTP ${row.totpUs.toFixed(0)} µs (${((row.totpUs / row.passwordUs - 1) * 100).toFixed(1)} %)`);
    }

    // Pages that send mail, with the sink taking opts.smtpDelay per mail.
    const mailAnswersMs = [];
    const sentBefore = sink.received.length;
    for (const u of mailPeople) {
      const jar = new CookieJar();
      const started = Date.now();
      const res = await submit(server.base, jar, '/forgot-password', '/forgot-password', { email: `${u}@bench.example` });
      mailAnswersMs.push(Date.now() - started);
      if (res.status !== 200) throw new Error(`forgot password for ${u}: ${res.status}`);
    }
    for (let i = 0; i < mailPeople.length; i++) {
      const jar = new CookieJar();
      const started = Date.now();
      const res = await submit(server.base, jar, '/register', '/register', { username: `new.person.${i}`, password: PASSWORD, email: `new.person.${i}@bench.example` });
      mailAnswersMs.push(Date.now() - started);
      if (res.status !== 303) throw new Error(`sign-up with an e-mail: ${res.status}`);
    }
    const expected = mailPeople.length * 2;
    const deadline = Date.now() + expected * (opts.smtpDelay + 2000) + 10_000;
    while (sink.received.length - sentBefore < expected && Date.now() < deadline) await sleep(200);
    const delivered = sink.received.length - sentBefore;

    const pwMedian = median(rounds.map((r) => r.passwordUs));
    const totpMedian = median(rounds.map((r) => r.totpUs));
    const record = {
      database: db.kind,
      rounds,
      passwordUsMedian: pwMedian,
      totpUsMedian: totpMedian,
      totpOverPassword: totpMedian / pwMedian,
      mail: { smtpDelayMs: opts.smtpDelay, answers: mailAnswersMs.length, p50Ms: percentile(mailAnswersMs, 50), maxMs: Math.max(...mailAnswersMs), expected, delivered },
    };
    const lines = [
      `| sign-in (${db.kind}, ${opts.rounds} rounds × ${opts.perRound}, ${CONCURRENCY} at a time) | server CPU per sign-in (median round) | wall time per sign-in |`,
      '|---|---|---|',
      `| password (GET + POST /login) | ${pwMedian.toFixed(0)} µs | ${median(rounds.map((r) => r.passwordWallMs)).toFixed(1)} ms |`,
      `| password + TOTP (+ GET + POST /login/second-factor) | ${totpMedian.toFixed(0)} µs (${((record.totpOverPassword - 1) * 100).toFixed(1)} %; target ≤ +5 %) | ${median(rounds.map((r) => r.totpWallMs)).toFixed(1)} ms |`,
      '',
      `Pages that send mail, the mail sink taking ${opts.smtpDelay} ms per mail: ${mailAnswersMs.length} answers ("Forgot password?" and sign-up with an e-mail), median ${record.mail.p50Ms} ms, slowest ${record.mail.maxMs} ms; ${delivered} of ${expected} mails reached the sink afterwards.`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    process.stdout.write(`${JSON.stringify(record)}\n`);
    if (delivered < expected) throw new Error(`only ${delivered} of ${expected} mails reached the sink`);
    if (!opts.smoke) {
      const misses = [];
      if (record.totpOverPassword > 1.05) misses.push(`password + TOTP costs ${((record.totpOverPassword - 1) * 100).toFixed(1)} % more than a password sign-in (target ≤ 5 %)`);
      if (record.mail.maxMs >= opts.smtpDelay) misses.push(`a page answer took ${record.mail.maxMs} ms, as long as the sink's ${opts.smtpDelay} ms: it waited on SMTP`);
      if (misses.length) {
        process.stderr.write(`missed: ${misses.join('; ')}\n`);
        process.exitCode = 1;
      }
    }
  } finally {
    await server?.stop();
    await sink.stop();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
