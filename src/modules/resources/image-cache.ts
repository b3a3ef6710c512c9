import type { ImageType } from './images.js';

/** An image as the CDN routes serve it. */
export interface ServedImage {
  type: ImageType;
  body: Buffer;
  /** An uploaded image (issue #42 §3): its path names its content, so it may be cached for good. */
  uploaded?: boolean;
}

interface Entry {
  /** Undefined: the last fetch failed (remembered briefly, so a broken URL is not fetched on every hit). */
  image: ServedImage | undefined;
  expiresAt: number;
}

export interface ImageCacheLimits {
  /** Bytes of image kept in memory at most; the least recently used go first. */
  maxBytes: number;
  /** How long a fetched image is served from memory. */
  ttlMs: number;
  /** How long a failed fetch is remembered. */
  failureTtlMs: number;
  /** Addresses remembered at most (failures weigh no bytes). */
  maxEntries: number;
}

/**
 * The images the CDN routes fetched lately (issue #36 §4), per process, bounded in bytes: each
 * address is fetched at most once per `ttlMs` however often it is asked for, and concurrent asks
 * for an address share one fetch, so the routes cannot be used to make Gatehouse send a flood of
 * requests. Time comes from the caller (the injected clock).
 */
export class ImageCache {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<ServedImage | undefined>>();
  private bytes = 0;

  constructor(private readonly limits: ImageCacheLimits) {}

  /** The image at `url` from memory, or from `fetch` (once, however many ask at the same time). */
  async get(url: string, now: number, fetch: () => Promise<ServedImage | undefined>): Promise<ServedImage | undefined> {
    const entry = this.entries.get(url);
    if (entry && entry.expiresAt > now) {
      // Most recently used last: Map keeps insertion order.
      this.entries.delete(url);
      this.entries.set(url, entry);
      return entry.image;
    }
    if (entry) this.remove(url, entry);
    const running = this.pending.get(url);
    if (running) return running;
    const fetching = fetch().then(
      (image) => {
        this.pending.delete(url);
        this.store(url, image, now);
        return image;
      },
      () => {
        this.pending.delete(url);
        this.store(url, undefined, now);
        return undefined;
      },
    );
    this.pending.set(url, fetching);
    return fetching;
  }

  private store(url: string, image: ServedImage | undefined, now: number): void {
    const size = image?.body.length ?? 0;
    if (size > this.limits.maxBytes) return;
    const old = this.entries.get(url);
    if (old) this.remove(url, old);
    this.entries.set(url, { image, expiresAt: now + (image ? this.limits.ttlMs : this.limits.failureTtlMs) });
    this.bytes += size;
    for (const [key, e] of this.entries) {
      if (this.bytes <= this.limits.maxBytes && this.entries.size <= this.limits.maxEntries) break;
      this.remove(key, e);
    }
  }

  private remove(url: string, entry: Entry): void {
    this.entries.delete(url);
    this.bytes -= entry.image?.body.length ?? 0;
  }
}
