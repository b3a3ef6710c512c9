import fs, { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createProcessLog, prettyLine } from '../../src/http/log-destination.js';

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-log-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the process log destination (issue #26 §0, issue #25 §9)', () => {
  it('elsewhere than a terminal: JSON lines, buffered without blocking, all written out by flush', () => {
    const file = join(dir, 'json.log');
    const fd = openSync(file, 'w');
    const log = createProcessLog('info', { pretty: false, fd });
    for (let i = 0; i < 20; i += 1) log.logger.info({ n: i, token: 'whtok_secret' }, 'line');
    // Under MIN_LENGTH bytes, nothing was written yet: the requests that logged did not wait for a write.
    expect(readFileSync(file, 'utf8')).toBe('');
    log.close();
    closeSync(fd);
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { n: number; token: string; msg: string });
    expect(lines.map((l) => l.n)).toEqual([...Array(20).keys()]);
    expect(lines[0]).toMatchObject({ msg: 'line', token: '[REDACTED]' });
    expect(log.dropped).toBe(0);
  });

  it('a quiet server writes nothing while nothing is logged, and a line it logs reaches the output within the flush interval', async () => {
    const file = join(dir, 'quiet.log');
    const fd = openSync(file, 'w');
    const writes = vi.spyOn(fs, 'write');
    const log = createProcessLog('info', { pretty: false, fd });
    try {
      await sleep(250);
      expect(writes).not.toHaveBeenCalled();
      log.logger.info('one line');
      await expect.poll(() => readFileSync(file, 'utf8'), { timeout: 1000 }).toContain('"msg":"one line"');
      const after = writes.mock.calls.length;
      await sleep(250);
      expect(writes.mock.calls.length - after).toBeLessThanOrEqual(1);
    } finally {
      writes.mockRestore();
      log.close();
      closeSync(fd);
    }
  });

  it('on a terminal: one readable line per record, a request as method, route, status and time', () => {
    const file = join(dir, 'pretty.log');
    const fd = openSync(file, 'w');
    const log = createProcessLog('info', { pretty: true, fd });
    log.logger.info({ reqId: 'req-7', req: { method: 'POST', url: '/api/v1/webhooks/1/[REDACTED]', ip: '127.0.0.1' }, res: { statusCode: 204 }, responseTime: 1.3 }, 'request completed');
    log.logger.warn({ err: { code: 'ECONNREFUSED' }, client_secret: 'shh' }, 'Redis unreachable');
    closeSync(fd);
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}POST \/api\/v1\/webhooks\/1\/\[REDACTED\] 204 1\.3 ms .*req-7$/);
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}Redis unreachable err=\{"code":"ECONNREFUSED"\} client_secret=\[REDACTED\]/);
  });

  it('prettyLine leaves a line that is not JSON as it is', () => {
    expect(prettyLine('plain text\n')).toBe('plain text');
  });
});
