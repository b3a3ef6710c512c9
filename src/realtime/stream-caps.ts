/**
 * Issue #36 §1: how many live streams one person, and one client address, may hold open on this
 * instance. Every open stream costs the instance a socket, its subscriptions and a write per
 * event, so without a cap one account (or one address with many accounts) could open thousands.
 * Caps are counted per instance: each instance protects its own event loop.
 */
export interface StreamCaps {
  /** Open streams per person; 0: no limit. */
  perPerson: number;
  /** Open streams per client address (the caller passes IPv6 by /64); 0: no limit. */
  perAddress: number;
}

/** Which cap refused a stream. */
export type StreamRefusal = 'person' | 'address';

/** A place held by one open stream; `release` gives it back (more calls do nothing). */
export interface StreamPlace {
  release(): void;
}

export class OpenStreams {
  private readonly byPerson = new Map<string, number>();
  private readonly byAddress = new Map<string, number>();

  constructor(readonly caps: StreamCaps) {}

  /**
   * Takes a place for a stream of `personId` from `address`, or names the cap that refuses it.
   * Synchronous, so two streams opened at once cannot both take the last place.
   */
  open(personId: string, address: string): StreamPlace | StreamRefusal {
    const person = this.byPerson.get(personId) ?? 0;
    if (this.caps.perPerson > 0 && person >= this.caps.perPerson) return 'person';
    const fromAddress = this.byAddress.get(address) ?? 0;
    if (this.caps.perAddress > 0 && fromAddress >= this.caps.perAddress) return 'address';
    this.byPerson.set(personId, person + 1);
    this.byAddress.set(address, fromAddress + 1);
    let held = true;
    return {
      release: () => {
        if (!held) return;
        held = false;
        decrement(this.byPerson, personId);
        decrement(this.byAddress, address);
      },
    };
  }

  /** Streams `personId` holds open here. */
  ofPerson(personId: string): number {
    return this.byPerson.get(personId) ?? 0;
  }

  /** Streams open from `address` here. */
  fromAddress(address: string): number {
    return this.byAddress.get(address) ?? 0;
  }
}

/** Forgets a key at zero, so the maps hold only people and addresses with an open stream. */
function decrement(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 0) - 1;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}
