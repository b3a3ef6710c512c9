import { createCipheriv, createDecipheriv, scryptSync } from 'node:crypto';

/**
 * Private signing keys at rest (issue #22 §3, docs/oidc.md §Keys): with GATEHOUSE_OIDC_KEY_SECRET
 * set they are stored as `enc:v1:<salt>:<iv>:<tag>:<ciphertext>` (AES-256-GCM under a key derived
 * from the secret with scrypt and a per-key salt), so a copy of the database alone cannot forge
 * ID tokens; without the secret they are stored as plain JSON.
 */
const PREFIX = 'enc:v1:';
// scrypt cost: keys are opened once per process and key, never per request.
const SCRYPT = { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } as const;

export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

function derive(secret: string, salt: Buffer): Buffer {
  return scryptSync(secret, salt, 32, SCRYPT);
}

/** Seals a private JWK's JSON; `salt` (16 bytes) and `iv` (12 bytes) come from the caller's random source. */
export function sealPrivateKey(json: string, secret: string, salt: Buffer, iv: Buffer): string {
  const cipher = createCipheriv('aes-256-gcm', derive(secret, salt), iv);
  const ciphertext = Buffer.concat([cipher.update(json, 'utf8'), cipher.final()]);
  return `${PREFIX}${[salt, iv, cipher.getAuthTag(), ciphertext].map((b) => b.toString('base64url')).join(':')}`;
}

/** Opens what sealPrivateKey stored; throws when the secret is missing or wrong. */
export function openPrivateKey(stored: string, secret: string | undefined, kid: string): string {
  if (!isSealed(stored)) return stored;
  if (secret === undefined) throw new Error(`signing key ${kid} is encrypted: set GATEHOUSE_OIDC_KEY_SECRET to the secret it was created with`);
  const [salt, iv, tag, ciphertext] = stored.slice(PREFIX.length).split(':').map((part) => Buffer.from(part, 'base64url'));
  if (!salt || !iv || !tag || !ciphertext) throw new Error(`signing key ${kid} is stored in an unknown format`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', derive(secret, salt), iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new Error(`signing key ${kid} cannot be decrypted: GATEHOUSE_OIDC_KEY_SECRET is not the secret it was created with`);
  }
}
