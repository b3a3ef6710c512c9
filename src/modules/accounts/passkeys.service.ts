import { generateAuthenticationOptions, generateRegistrationOptions, verifyAuthenticationResponse, verifyRegistrationResponse } from '@simplewebauthn/server';
import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON, VerifiedAuthenticationResponse } from '@simplewebauthn/server';
import { actingAs, type Acting, type Who } from '../../core/acting.js';
import { person as personActor, type PersonActor } from '../../core/actor.js';
import { MINUTE } from '../../core/clock.js';
import { addFieldError, ApiErrors, RateLimitedError } from '../../core/errors.js';
import { ACCOUNT_DISABLED_CODE, disabledAccountMessage } from './disabled-accounts.js';
import type { BucketRule } from '../../rate-limit/bucket.js';
import { addressBlock, beginSignIn } from './sign-in-throttle.js';
import { verifyPassword } from '../../core/password.js';
import { hashSecret } from '../../core/secrets.js';
import type { Deps } from '../../deps.js';
import { changing, emitted } from '../../events/event-bus.js';
import type { Person } from '../directory/people.js';
import { getPasswordHash, getPersonById } from '../directory/people.service.js';
import { deletePasskey, findPasskey, insertChallenge, insertPasskey, listPasskeys, purgeChallenges, takeChallenge, usePasskey, type PasskeyRecord } from './passkeys.repository.js';
import type { PasskeyView } from './passkeys.js';
import { issueRecoveryCodesIfNone, recordSessionMethods, secondFactorsChanged } from '../mfa/mfa.service.js';
import { replaceSession, startSessionIn, type StartedSession } from './sessions.service.js';

/** Issue #38 §4: a ceremony's challenge lives five minutes and works once. */
const CHALLENGE_LIFETIME_MS = 5 * MINUTE;
const NAME_MAX = 64;
/** A person needs a few passkeys (laptop, phone, a security key), not hundreds. */
const PASSKEYS_MAX = 20;

/**
 * Passwordless sign-ins started per address: a person retries a few times, a script that fills the
 * challenge table does not get far (the table is also purged of expired challenges).
 */
export const PASSKEY_OPTIONS_RULE: BucketRule = { limit: 30, windowMs: 15 * MINUTE };
/** The throttle's account name for a credential registered to nobody (no username can be "#"-prefixed). */
const UNKNOWN_PASSKEY_ACCOUNT = '#unknown-passkey';

export const PASSKEY_REFUSED = 'This passkey could not be used to sign in here. Try again, or sign in with your password.';


/**
 * The relying party: its ID is the host of GATEHOUSE_BASE_URL and the only origin accepted is that
 * URL's origin (WebAuthn §5.1.3, §7.1 step 9), so an assertion made for another site is refused.
 */
function relyingParty(deps: Deps): { id: string; origin: string } {
  const url = new URL(deps.config.baseUrl);
  return { id: url.hostname, origin: url.origin };
}

function refused(field: string, message: string): Error {
  return ApiErrors.invalidFormBody(addFieldError({}, [field], { code: 'PASSKEY_REFUSED', message }));
}

/**
 * What a challenge was issued for: a challenge answers only the ceremony it was made for, so an
 * assertion made to sign in does not confirm an account deletion.
 */
type ChallengePurpose = 'register' | 'sign-in' | 'second-factor' | 'reauthenticate';

/** A random challenge; the browser sends it back base64url-encoded in its client data, which is what is stored (hashed). */
async function newChallenge(deps: Deps, purpose: ChallengePurpose, userId: string | null): Promise<Uint8Array<ArrayBuffer>> {
  const now = deps.clock.now();
  const challenge = new Uint8Array(deps.random.bytes(32));
  await purgeChallenges(deps.db, now);
  // Issue #38 §4: stored hashed, so a read of the table gives no usable challenge.
  await insertChallenge(deps.db, hashSecret(Buffer.from(challenge).toString('base64url')), purpose, userId, now + CHALLENGE_LIFETIME_MS);
  return challenge;
}

/** The person's passkeys, oldest first. */
export async function passkeysOf(deps: Deps, personId: string): Promise<PasskeyView[]> {
  const rows = await listPasskeys(deps.db, personId);
  return rows.map((r) => ({ id: r.credentialId, name: r.name, createdAt: r.createdAt, lastUsedAt: r.lastUsedAt }));
}

/**
 * Options for navigator.credentials.create(): a discoverable credential (resident key required) with
 * user verification required, so the passkey alone can sign in; the person's passkeys excluded.
 */
export async function beginRegistration(deps: Deps, acting: Acting<PersonActor>): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const person = await getPersonById(deps, acting.actor.id);
  if (!person) throw ApiErrors.unknownUser();
  const existing = await listPasskeys(deps.db, person.id);
  const rp = relyingParty(deps);
  return generateRegistrationOptions({
    rpName: deps.config.serviceName,
    rpID: rp.id,
    userName: person.username,
    userDisplayName: person.name,
    userID: new TextEncoder().encode(person.id),
    challenge: await newChallenge(deps, 'register', person.id),
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
}

/** Reads the browser's JSON, refusing what is not a credential object. */
function parseCredential<T>(text: string, field: string): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw refused(field, 'The passkey response could not be read. Try again.');
  }
  if (typeof parsed !== 'object' || parsed === null || typeof (parsed as { id?: unknown }).id !== 'string' || typeof (parsed as { response?: unknown }).response !== 'object') {
    throw refused(field, 'The passkey response could not be read. Try again.');
  }
  return parsed as T;
}

/**
 * Verifies a registration (challenge single use and this person's, origin and RP ID ours, user
 * verified) and stores the passkey under its name: passkey.added. A passkey is a second factor
 * (issue #38 §4), so a person without unused recovery codes gets ten, returned to be shown once
 * (mfa.recovery_codes_generated), as turning on TOTP gives them.
 */
export async function finishRegistration(deps: Deps, acting: Acting<PersonActor>, input: { name: string; credential: string }): Promise<{ passkey: PasskeyView; recoveryCodes: string[] | undefined }> {
  const name = input.name.trim();
  if (name === '' || [...name].length > NAME_MAX) throw refused('name', `Give the passkey a name of 1 to ${NAME_MAX} characters.`);
  const response = parseCredential<RegistrationResponseJSON>(input.credential, 'credential');
  const userId = acting.actor.id;
  if ((await listPasskeys(deps.db, userId)).length >= PASSKEYS_MAX) throw refused('name', `You can have at most ${PASSKEYS_MAX} passkeys. Remove one first.`);
  const rp = relyingParty(deps);
  const now = deps.clock.now();
  let verification;
  try {
    verification = await verifyRegistrationResponse({
      response,
      expectedChallenge: (challenge) => takeChallenge(deps.db, hashSecret(challenge), 'register', userId, now),
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      requireUserVerification: true,
    });
  } catch {
    throw refused('credential', 'The passkey was not registered: its response was expired, already used or made for another site. Try again.');
  }
  if (!verification.verified) throw refused('credential', 'The passkey was not registered. Try again.');
  const credential = verification.registrationInfo.credential;
  if (await findPasskey(deps.db, credential.id)) throw refused('credential', 'This passkey is already registered.');
  const record = {
    credentialId: credential.id,
    userId,
    name,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    signCount: credential.counter,
    transports: (response.response.transports ?? []).filter((t) => /^[a-z-]{1,16}$/.test(t)).slice(0, 8),
    createdAt: now,
  };
  const recoveryCodes = await changing(deps, acting, async (trx, emit) => {
    await insertPasskey(trx, record);
    await secondFactorsChanged(trx, userId);
    emit({ type: 'passkey.added', userId, name });
    const codes = await issueRecoveryCodesIfNone(deps, trx, userId);
    if (codes) emit({ type: 'mfa.recovery_codes_generated', userId });
    return codes;
  });
  return { passkey: { id: record.credentialId, name, createdAt: now, lastUsedAt: null }, recoveryCodes };
}

/**
 * Removes one of the person's passkeys after their password is given again (issue #38 §4: remove
 * with re-authentication): passkey.removed. With no second factor left, the recovery codes go too.
 */
export async function removePasskey(deps: Deps, acting: Acting<PersonActor>, input: { credentialId: string; password: string }): Promise<void> {
  const userId = acting.actor.id;
  const hash = await getPasswordHash(deps, userId);
  if (!hash || input.password.length === 0 || input.password.length > 1024 || !(await verifyPassword(input.password, hash))) {
    throw ApiErrors.invalidFormBody(addFieldError({}, ['password'], { code: 'PASSWORD_INCORRECT', message: 'Your password is incorrect. The passkey was not removed.' }));
  }
  await changing(deps, acting, async (trx, emit) => {
    const removed = await deletePasskey(trx, userId, input.credentialId);
    if (!removed) throw ApiErrors.invalidFormBody(addFieldError({}, ['passkey'], { code: 'UNKNOWN_PASSKEY', message: 'That passkey is not one of yours.' }));
    await secondFactorsChanged(trx, userId);
    emit({ type: 'passkey.removed', userId, name: removed.name });
  });
}

/**
 * Options for navigator.credentials.get() without allowCredentials: the authenticator offers its
 * discoverable passkeys. Anyone may ask, and each answer stores a challenge, so an address gets
 * PASSKEY_OPTIONS_RULE of them (429 past it; issue #38 §4).
 */
export async function beginPasskeySignIn(deps: Deps, address: string | null): Promise<PublicKeyCredentialRequestOptionsJSON> {
  if (address !== null) {
    const taken = await deps.buckets.take(`passkey:options:${addressBlock(address)}`, PASSKEY_OPTIONS_RULE, deps.clock.now());
    if (!taken.allowed) throw new RateLimitedError(taken.resetAfterMs, 'Too many passkey sign-ins were started from your network.');
  }
  return generateAuthenticationOptions({ rpID: relyingParty(deps).id, userVerification: 'required', challenge: await newChallenge(deps, 'sign-in', null) });
}

/**
 * "Sign in with a passkey" (issue #38 §4): no password. The passkey must be registered here, its
 * user handle must name the person it was registered to (another account's credential is
 * refused), the challenge ours and unused, the origin and RP ID ours, the person verified by the
 * authenticator, and the signature counter must move forward (a clone is refused). A verified
 * passkey is two factors in one (something held, and the PIN or biometric that unlocked it), so
 * the session's methods are `hwk` and `mfa` (RFC 8176). signin.succeeded with method passkey.
 */
export async function signInWithPasskey(
  deps: Deps,
  acting: Acting<Who>,
  input: { credential: string; userAgent: string | null; replacingSessionToken?: string | undefined },
): Promise<{ person: Person; session: StartedSession; amr: string[] }> {
  const response = parseCredential<AuthenticationResponseJSON>(input.credential, 'passkey');
  const passkey = await findPasskey(deps.db, response.id);
  const owner = passkey ? await getPersonById(deps, passkey.userId) : undefined;
  // Issue #38 §4: the sign-in throttle of passwords (sign-in-throttle.ts), per address and, when the
  // credential names a person, per username and address; a credential of nobody's counts under one
  // name of its own, so refused guesses from an address run out whichever they were.
  const throttle = await beginSignIn(deps.buckets, deps.clock.now(), owner?.username ?? UNKNOWN_PASSKEY_ACCOUNT, acting.address ?? undefined);
  if (throttle.delayMs > 0) await deps.clock.sleep(throttle.delayMs);
  const handle = response.response.userHandle;
  const claimed = typeof handle === 'string' ? Buffer.from(handle, 'base64url').toString('utf8') : undefined;
  if (!passkey || (claimed !== undefined && claimed !== passkey.userId)) {
    // Still spends the challenge, so a refused response cannot be retried with it.
    await takeChallengeOf(deps, response);
    await throttle.failed();
    await emitted(deps, acting, { type: 'signin.failed', username: '', userId: passkey?.userId ?? null, why: 'passkey-refused' });
    throw refused('passkey', PASSKEY_REFUSED);
  }
  const now = deps.clock.now();
  const verification = await verifyAssertion(deps, response, passkey, { purpose: 'sign-in', personId: null, requireUserVerification: true }, now);
  if (verification === undefined || !verification.verified || !owner) {
    await throttle.failed();
    await emitted(deps, acting, { type: 'signin.failed', username: '', userId: passkey.userId, why: 'passkey-refused' });
    throw refused('passkey', PASSKEY_REFUSED);
  }
  await throttle.succeeded();
  // Issue #39: a disabled account signs in to nothing, with a passkey as with a password; said
  // only after a verified assertion, so the refusal tells nobody else whether the account is disabled.
  if (owner.disabledAt !== null) {
    await emitted(deps, acting, { type: 'signin.failed', username: owner.username, userId: owner.id, why: 'disabled' });
    throw ApiErrors.invalidFormBody(addFieldError({}, ['passkey'], { code: ACCOUNT_DISABLED_CODE, message: disabledAccountMessage(deps.config.serviceName) }));
  }
  const person = owner;
  const signedIn = actingAs(acting, personActor(person.id));
  const amr = ['hwk', 'mfa'];
  const session = await changing(deps, signedIn, async (trx, emit) => {
    if (!(await usePasskey(trx, passkey.credentialId, passkey.signCount, verification.authenticationInfo.newCounter, now))) throw refused('passkey', PASSKEY_REFUSED);
    const started = await startSessionIn(deps, signedIn, trx, input.userAgent);
    // The session's methods, read into its ID tokens (oidc/): hwk and mfa, not the pwd default.
    await recordSessionMethods(trx, started.token, person.id, amr, now);
    emit({ type: 'signin.succeeded', userId: person.id, method: 'passkey' });
    return started;
  });
  if (input.replacingSessionToken) await replaceSession(deps, signedIn, input.replacingSessionToken);
  return { person, session, amr };
}

/**
 * Checks an assertion against a stored passkey: the challenge ours, unused and issued for
 * `purpose` (and person), our origin and RP ID, the counter. Undefined when the library refuses it.
 */
async function verifyAssertion(
  deps: Deps,
  response: AuthenticationResponseJSON,
  passkey: PasskeyRecord,
  expected: { purpose: Exclude<ChallengePurpose, 'register'>; personId: string | null; requireUserVerification: boolean },
  now: number,
): Promise<VerifiedAuthenticationResponse | undefined> {
  const rp = relyingParty(deps);
  try {
    return await verifyAuthenticationResponse({
      response,
      expectedChallenge: (challenge) => takeChallenge(deps.db, hashSecret(challenge), expected.purpose, expected.personId, now),
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: { id: passkey.credentialId, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: passkey.signCount, transports: passkey.transports as never },
      requireUserVerification: expected.requireUserVerification,
    });
  } catch {
    return undefined;
  }
}

/** Spends the challenge a refused response carried, if it can be read. */
async function takeChallengeOf(deps: Deps, response: AuthenticationResponseJSON): Promise<void> {
  try {
    const client = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8')) as { challenge?: unknown };
    if (typeof client.challenge === 'string') await takeChallenge(deps.db, hashSecret(client.challenge), 'sign-in', null, deps.clock.now());
  } catch {
    // Unreadable client data carries no challenge to spend.
  }
}

/**
 * Options for the second sign-in step (or, with `reauthenticate`, for confirming a dangerous change
 * such as deleting the account): this person's passkeys only, the challenge bound to them and to
 * that purpose.
 */
export async function beginSecondFactorPasskey(deps: Deps, personId: string, purpose: 'second-factor' | 'reauthenticate' = 'second-factor'): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const passkeys = await listPasskeys(deps.db, personId);
  if (passkeys.length === 0) throw refused('passkey', 'This account has no passkey. Enter a code instead.');
  return generateAuthenticationOptions({
    rpID: relyingParty(deps).id,
    userVerification: 'preferred',
    allowCredentials: passkeys.map((p) => ({ id: p.credentialId, transports: p.transports })),
    challenge: await newChallenge(deps, purpose, personId),
  });
}

/**
 * A passkey as the second factor after the password (issue #38 §4): it must be one of this
 * person's, for our origin and RP ID, answering a challenge issued to this person for `purpose`,
 * its counter moving forward. Its amr value is `hwk` (the key is held; the password already was
 * the knowledge). `reauthenticate` confirms a dangerous change instead (account deletion); its
 * refusal names the form's `passkey` field.
 */
export async function verifySecondFactorPasskey(deps: Deps, personId: string, credential: string, purpose: 'second-factor' | 'reauthenticate' = 'second-factor'): Promise<'hwk'> {
  const field = purpose === 'second-factor' ? 'code' : 'passkey';
  const response = parseCredential<AuthenticationResponseJSON>(credential, field);
  const passkey = await findPasskey(deps.db, response.id);
  if (!passkey || passkey.userId !== personId) throw refused(field, PASSKEY_REFUSED);
  const now = deps.clock.now();
  const verification = await verifyAssertion(deps, response, passkey, { purpose, personId, requireUserVerification: false }, now);
  if (verification === undefined) throw refused(field, PASSKEY_REFUSED);
  if (!verification.verified || !(await usePasskey(deps.db, passkey.credentialId, passkey.signCount, verification.authenticationInfo.newCounter, now))) throw refused(field, PASSKEY_REFUSED);
  return 'hwk';
}
