import { describe, expect, it } from 'vitest';
import { OpenStreams, type StreamPlace } from '../../src/realtime/stream-caps.js';

describe('open live streams per person and per address (issue #36 §1)', () => {
  it('refuses the stream beyond a person’s cap, then the one beyond an address’s; a released place can be taken again', () => {
    const streams = new OpenStreams({ perPerson: 2, perAddress: 3 });
    const ann = [streams.open('ann', '10.0.0.1'), streams.open('ann', '10.0.0.1')];
    expect(streams.open('ann', '10.0.0.2')).toBe('person');
    const bob = streams.open('bob', '10.0.0.1');
    expect(typeof bob).toBe('object');
    expect(streams.open('cat', '10.0.0.1')).toBe('address');
    expect(typeof streams.open('cat', '10.0.0.2')).toBe('object');

    (ann[0] as StreamPlace).release();
    // Released twice (the response closed and the stream ended): given back once.
    (ann[0] as StreamPlace).release();
    expect(streams.ofPerson('ann')).toBe(1);
    expect(streams.fromAddress('10.0.0.1')).toBe(2);
    expect(typeof streams.open('ann', '10.0.0.1')).toBe('object');
    expect(streams.open('dan', '10.0.0.1')).toBe('address');
  });

  it('0 turns a cap off', () => {
    const streams = new OpenStreams({ perPerson: 0, perAddress: 0 });
    for (let i = 0; i < 1000; i += 1) expect(typeof streams.open('ann', '10.0.0.1')).toBe('object');
    expect(streams.ofPerson('ann')).toBe(1000);
  });

  it('forgets people and addresses whose streams all closed', () => {
    const streams = new OpenStreams({ perPerson: 1, perAddress: 1 });
    const place = streams.open('ann', '10.0.0.1') as StreamPlace;
    place.release();
    expect([streams.ofPerson('ann'), streams.fromAddress('10.0.0.1')]).toEqual([0, 0]);
    expect(typeof streams.open('bob', '10.0.0.1')).toBe('object');
  });
});
