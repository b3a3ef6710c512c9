import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { DISCORD_EPOCH, isSnowflake, LEGACY_GATEHOUSE_EPOCH, SnowflakeGenerator, snowflakeTime } from '../../src/core/snowflake.js';

describe('snowflake ids (DESIGN §1: 64-bit, time-ordered, decimal strings)', () => {
  it('encodes the creation time, readable back from the id', () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 21, 12));
    const id = new SnowflakeGenerator(clock, 7).next();
    expect(snowflakeTime(id)).toBe(Date.UTC(2026, 10, 21, 12));
    expect(isSnowflake(id)).toBe(true);
  });

  it('ids made later sort after earlier ones, numerically', () => {
    const clock = new ManualClock();
    const ids = new SnowflakeGenerator(clock, 1);
    const first = ids.next();
    clock.advance(1);
    const second = ids.next();
    expect(BigInt(second) > BigInt(first)).toBe(true);
  });

  it('stays unique and increasing for 10,000 ids in one millisecond (sequence overflow borrows the next ms)', () => {
    const ids = new SnowflakeGenerator(new ManualClock(), 3);
    const seen = new Set<string>();
    let last = 0n;
    for (let i = 0; i < 10_000; i += 1) {
      const id = ids.next();
      expect(BigInt(id) > last).toBe(true);
      last = BigInt(id);
      seen.add(id);
    }
    expect(seen.size).toBe(10_000);
  });

  it('never repeats when the clock steps backwards', () => {
    const clock = new ManualClock();
    const ids = new SnowflakeGenerator(clock, 2);
    const before = ids.next();
    clock.advance(-5_000);
    expect(BigInt(ids.next()) > BigInt(before)).toBe(true);
  });

  it('two workers at the same instant never collide', () => {
    const clock = new ManualClock();
    const a = new SnowflakeGenerator(clock, 1);
    const b = new SnowflakeGenerator(clock, 2);
    const all = new Set<string>();
    for (let i = 0; i < 1000; i += 1) {
      all.add(a.next());
      all.add(b.next());
    }
    expect(all.size).toBe(2000);
  });

  it('refuses a worker id outside 0..1023', () => {
    expect(() => new SnowflakeGenerator(new ManualClock(), 1024)).toThrow(RangeError);
    expect(() => new SnowflakeGenerator(new ManualClock(), -1)).toThrow(RangeError);
  });

  it('isSnowflake accepts only decimal strings that fit in 63 bits', () => {
    expect(isSnowflake('0')).toBe(true);
    expect(isSnowflake('9223372036854775807')).toBe(true);
    expect(isSnowflake('9223372036854775808')).toBe(false);
    expect(isSnowflake('12a')).toBe(false);
    expect(isSnowflake('')).toBe(false);
    expect(isSnowflake('-1')).toBe(false);
    expect(isSnowflake(' 1')).toBe(false);
  });

  it("the epoch is Discord's, 2015-01-01T00:00:00Z (1420070400000 ms)", () => {
    expect(DISCORD_EPOCH).toBe(1420070400000);
    expect(new Date(DISCORD_EPOCH).toISOString()).toBe('2015-01-01T00:00:00.000Z');
  });

  it('a Discord library reads the creation time from an id (discord.py snowflake_time)', () => {
    const at = Date.UTC(2026, 10, 25, 12, 30, 15, 123);
    const id = new SnowflakeGenerator(new ManualClock(at), 3).next();
    // discord.utils.snowflake_time: ((id >> 22) + 1420070400000) / 1000
    expect(Number(BigInt(id) >> 22n) + 1420070400000).toBe(at);
  });

  it('ids issued now are larger than every id issued on the earlier 2026 epoch', () => {
    // The largest id the 2026 epoch could have issued by a given moment: all worker and sequence bits set.
    for (const at of [Date.UTC(2026, 10, 25), Date.UTC(2030, 0, 1), Date.UTC(2060, 0, 1)]) {
      const legacyMax = (BigInt(at - LEGACY_GATEHOUSE_EPOCH) << 22n) | 0x3fffffn;
      const now = new SnowflakeGenerator(new ManualClock(at), 0).next();
      expect(BigInt(now) > legacyMax).toBe(true);
    }
  });
});

describe('issue #36 §5: one id, one spelling', () => {
  it('isSnowflake refuses a leading zero (0123, 00, a 20-digit 0-padded id) and accepts 0 and every generated id', () => {
    for (const value of ['0123', '00', '01', '09223372036854775807', '000000000000000000001']) expect(isSnowflake(value), value).toBe(false);
    expect(isSnowflake('0')).toBe(true);
    expect(isSnowflake('1')).toBe(true);
    const id = new SnowflakeGenerator(new ManualClock(), 5).next();
    expect(isSnowflake(id)).toBe(true);
    expect(isSnowflake(`0${id}`)).toBe(false);
  });
});
