import { describe, expect, it } from 'vitest';
import { batched } from '../../src/storage/postgres-batch.js';

describe('rows of one event-loop turn in one statement (storage/postgres-batch.ts)', () => {
  it('writes issued in one turn go out as one statement, each caller getting its own row', async () => {
    const statements: number[][] = [];
    const write = batched<number, string>(async (items) => {
      statements.push([...items]);
      return items.map((n) => (n % 2 === 0 ? `row ${n}` : undefined));
    });
    const answers = await Promise.all([1, 2, 3, 4].map((n) => write(n)));
    expect(statements).toEqual([[1, 2, 3, 4]]);
    expect(answers).toEqual([undefined, 'row 2', undefined, 'row 4']);
    // A later turn is a statement of its own.
    expect(await write(6)).toBe('row 6');
    expect(statements).toHaveLength(2);
  });

  it('a caller is answered only once its statement has settled', async () => {
    let release: () => void = () => undefined;
    const write = batched<number, number>((items) => new Promise((resolve) => (release = () => resolve(items.map((n) => n * 10)))));
    let answered = false;
    const pending = write(1).then((v) => {
      answered = true;
      return v;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered).toBe(false);
    release();
    expect(await pending).toBe(10);
  });

  it('a statement that fails is retried row by row, so only the bad row’s caller fails', async () => {
    const statements: number[][] = [];
    const write = batched<number, number>(async (items) => {
      statements.push([...items]);
      if (items.includes(13)) throw new Error('check constraint');
      return items.map((n) => n);
    });
    const results = await Promise.allSettled([write(12), write(13), write(14)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(statements).toEqual([[12, 13, 14], [12], [13], [14]]);
  });

  it('more rows than the bound go into more statements', async () => {
    const sizes: number[] = [];
    const write = batched<number, number>(async (items) => {
      sizes.push(items.length);
      return [...items];
    }, 3);
    await Promise.all([1, 2, 3, 4, 5, 6, 7].map((n) => write(n)));
    expect(sizes).toEqual([3, 3, 1]);
  });
});

describe('group commit: at most maxInFlight statements out at once (storage/postgres-batch.ts)', () => {
  it('rows that arrive while the one statement allowed is out wait for it, then leave together', async () => {
    const statements: number[][] = [];
    const releases: (() => void)[] = [];
    const write = batched<number, number>(
      (items) =>
        new Promise((resolve) => {
          statements.push([...items]);
          releases.push(() => resolve(items.map((n) => n * 10)));
        }),
      500,
      1,
    );
    const first = write(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(statements).toEqual([[1]]);
    // Three later turns while statement [1] is out: no statement of their own yet.
    const later: Promise<number | undefined>[] = [];
    for (const n of [2, 3, 4]) {
      later.push(write(n));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(statements).toEqual([[1]]);
    releases[0]?.();
    expect(await first).toBe(10);
    // The next statement leaves at the end of the turn in which the first one settled.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(statements).toEqual([[1], [2, 3, 4]]);
    releases[1]?.();
    expect(await Promise.all(later)).toEqual([20, 30, 40]);
  });

  it('without the bound each turn sends its own statement at once', async () => {
    const statements: number[][] = [];
    const write = batched<number, number>((items) => {
      statements.push([...items]);
      return new Promise(() => undefined);
    });
    void write(1);
    await new Promise((resolve) => setImmediate(resolve));
    void write(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect(statements).toEqual([[1], [2]]);
  });

  it('a failed statement frees its place: the rows waiting behind it still go', async () => {
    let calls = 0;
    let fail: (error: Error) => void = () => undefined;
    const write = batched<number, number>(
      (items) => {
        calls += 1;
        if (calls === 1) return new Promise((_, reject) => (fail = reject));
        return Promise.resolve(items.map((n) => n));
      },
      500,
      1,
    );
    const first = write(1);
    await new Promise((resolve) => setImmediate(resolve));
    const second = write(2);
    fail(new Error('connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    expect(await second).toBe(2);
  });
});
