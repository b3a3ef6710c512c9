#!/usr/bin/env node
// The app of bench/interactions.mjs, in a process of its own (plain node:http on loopback): its
// interactions endpoint (/interactions) answers a command with type 4 at once, and its event
// webhooks endpoint (/events) answers 204. It records when each request had fully arrived
// (process.hrtime.bigint(): CLOCK_MONOTONIC, the same clock in every process of the machine, so
// the orchestrator can subtract its own send times).
//
// Only the checks on save are verified (Ed25519 over timestamp + body, as discord-interactions'
// verifyKey does): Discord's bad-signature check must be answered 401. Measured requests are
// parsed, not verified, so that the app's CPU on the shared 2 cores stays small (issue #40: "app
// answering at once").
//
// IPC from the orchestrator: { type: 'key', publicKey } (the app's verify_key, hex), { type:
// 'report' } → { type: 'report', commands: [[n, ns]…], events: [[eventType, ns]…], bad: [...] }.
import { createPublicKey, verify } from 'node:crypto';
import http from 'node:http';

let publicKey;
/** [sequence number from the option `n`, arrival ns] of each command; [event type, arrival ns] of each event. */
const commands = [];
const events = [];
/** Anything unexpected (a request that does not parse, an unknown path): the orchestrator fails on it. */
const bad = [];

/** RFC 8410 §4: an Ed25519 public key as SPKI DER is this 12-byte prefix and the 32-byte key. */
const keyFromHex = (hex) => createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });

function signed(req, body) {
  const signature = req.headers['x-signature-ed25519'];
  const timestamp = req.headers['x-signature-timestamp'];
  if (!publicKey || typeof signature !== 'string' || typeof timestamp !== 'string') return false;
  try {
    return verify(null, Buffer.concat([Buffer.from(timestamp), body]), publicKey, Buffer.from(signature, 'hex'));
  } catch {
    return false;
  }
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const arrived = process.hrtime.bigint();
    const body = Buffer.concat(chunks);
    let message;
    try {
      message = JSON.parse(body.toString('utf8'));
    } catch {
      bad.push(`${req.url}: not JSON`);
      res.writeHead(400).end();
      return;
    }
    if (req.url === '/interactions') {
      if (message.type === 1) {
        // The checks on save: a PING signed right is answered {"type":1}, one signed wrong 401.
        if (!signed(req, body)) return void res.writeHead(401).end();
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"type":1}');
      }
      const n = Number(message.data?.options?.find((o) => o.name === 'n')?.value);
      if (message.type !== 2 || !Number.isInteger(n)) bad.push(`/interactions: unexpected ${body.toString('utf8').slice(0, 200)}`);
      else commands.push([n, arrived.toString()]);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 4, data: { content: `pong ${n}` } }));
      return;
    }
    if (req.url === '/events') {
      if (message.type === 0) {
        if (!signed(req, body)) return void res.writeHead(401).end();
        return void res.writeHead(204).end();
      }
      if (message.type !== 1 || typeof message.event?.type !== 'string') bad.push(`/events: unexpected ${body.toString('utf8').slice(0, 200)}`);
      else events.push([message.event.type, arrived.toString()]);
      return void res.writeHead(204).end();
    }
    bad.push(`unknown path ${req.url}`);
    res.writeHead(404).end();
  });
});
server.keepAliveTimeout = 30_000;

process.on('message', (m) => {
  if (m.type === 'key') {
    publicKey = keyFromHex(m.publicKey);
    process.send({ type: 'key-set' });
  } else if (m.type === 'report') {
    process.send({ type: 'report', commands, events, bad });
  } else if (m.type === 'clear') {
    commands.length = 0;
    events.length = 0;
    process.send({ type: 'cleared' });
  }
});
process.on('disconnect', () => server.close(() => process.exit(0)));

server.listen(0, '127.0.0.1', () => process.send({ type: 'listening', port: server.address().port }));
