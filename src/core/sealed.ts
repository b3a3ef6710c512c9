import { createCipheriv, createDecipheriv, createHmac } from 'node:crypto';

/**
 * Values sealed at rest under a server secret (GATEHOUSE_SECRET, never in the database): AES-256-GCM
 * under HMAC-SHA-256(secret, purpose), stored as base64(iv ‖ tag ‖ ciphertext). The purpose keeps
 * the keys of different uses apart; `aad` binds a sealed value to its row, so a sealed value
 * copied into another row does not open. Used by one-time reveals and invite codes.
 */

/** The 32-byte key for one purpose under one server secret. */
export function sealingKey(secret: string, purpose: string): Buffer {
  return createHmac('sha256', secret).update(purpose).digest();
}

/** Seals `plain`; `iv` (12 bytes) comes from the caller's random source. */
export function seal(key: Buffer, iv: Buffer, plain: string, aad?: string): string {
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (aad !== undefined) cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

/** Opens what `seal` made with this key (and aad); undefined when it does not open. */
export function open(key: Buffer, sealed: string, aad?: string): string | undefined {
  try {
    const raw = Buffer.from(sealed, 'base64');
    if (raw.length < 28) return undefined;
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    if (aad !== undefined) decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * Issue #36 §4: what the database keeps to recognise its server secret, never the secret itself:
 * HMAC-SHA-256(secret, a fixed label), hex. An instance whose secrets yield no stored check
 * would seal and derive with a secret the others cannot use, so it refuses to start
 * (storage/server-secret-check.ts). The label keeps this value apart from every sealing key.
 */
export function secretCheck(secret: string): string {
  return createHmac('sha256', secret).update('gatehouse server secret check').digest('hex');
}
