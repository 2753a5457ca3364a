/**
 * Passkeys (WebAuthn Level 3 public-key credentials), registered from the account page and used
 * to sign in beside the email code, through @simplewebauthn/server (docs/passkeys.md).
 *
 * - The RP ID is the issuer's host and the only accepted origin is the issuer's origin, compared
 *   exactly (WebAuthn §7.1 step 9, §7.2 step 13).
 * - Challenges are stored server side, single use (a conditional UPDATE with one winner) and
 *   expire after PASSKEY_CHALLENGE_TTL_MS.
 * - The signature counter must grow whenever the stored or the presented one is non-zero;
 *   a regression is refused as a possibly cloned authenticator (WebAuthn §6.1.1).
 * - Registration needs a fresh sign-in: the session's auth_time within STEP_UP_MAX_AGE_MS.
 * - The unknown-credential signal is sent only for a credential this tenant removed within
 *   PASSKEY_TOMBSTONE_TTL_MS (its tombstone), never for one the tenant never knew: the RP ID is
 *   shared by every tenant, so another tenant's working passkey must not be dropped.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { deriveKey, newId } from '../../crypto.js';
import { isUniqueViolation, type Database, type Tx } from '../../db/index.js';
import { ApiError, notFound } from '../../errors.js';
import { TenantScope, type LoginUser, type PasskeyRow, type WebauthnChallengeRow } from '../../repositories/index.js';
import { audit, type Actor } from '../audit.js';

/** How long a registration or authentication challenge may be answered. */
export const PASSKEY_CHALLENGE_TTL_MS = 5 * 60_000;
/** Registration needs a sign-in this recent (step-up). */
export const STEP_UP_MAX_AGE_MS = 5 * 60_000;
/**
 * How long a removed passkey keeps its tombstone, so that an assertion with it still gets the
 * unknown-credential signal (docs/passkeys.md). Long enough for a user who signs in rarely to
 * present the removed credential again and have the browser forget it; bounded, so the table
 * stays the size of recent removals (the auth purge deletes expired tombstones). After it the
 * credential is refused like any credential the tenant does not know, without the signal.
 */
export const PASSKEY_TOMBSTONE_TTL_MS = 90 * 24 * 3_600_000;
/** The direct-auth provider id of a passkey sign-in. */
export const PASSKEY_PROVIDER = 'passkey';

/**
 * Authentication context of a passkey sign-in (docs/passkeys.md). The acr values are those of
 * OpenID Enhanced Authentication Profile ACR Values 1.0: `phrh` when the key cannot leave the
 * authenticator, `phr` when it may be synced. The amr values are RFC 8176 §2.
 */
export const ACR_PASSKEY_HARDWARE = 'phrh';
export const ACR_PASSKEY_SYNCED = 'phr';

/** What a passkey shows its owner (account page, data export): public data only. */
export interface PasskeyView {
  id: string;
  name: string;
  /** base64url credential id, as the browser knows it. */
  credentialId: string;
  deviceType: 'singleDevice' | 'multiDevice';
  backedUp: boolean;
  transports: string[];
  aaguid: string;
  createdAt: number;
  lastUsedAt: number | null;
}

/**
 * A passkey's public data as a snake_case record: the data export's `passkeys` rows, the
 * account page's JSON and the operators' view are built from it. Never the public key, the
 * signature counter or the user handle.
 */
export function publicPasskeyRecord(p: PasskeyView) {
  return {
    id: p.id,
    name: p.name,
    credential_id: p.credentialId,
    device_type: p.deviceType,
    backed_up: p.backedUp,
    transports: p.transports,
    aaguid: p.aaguid,
    created_at: p.createdAt,
    last_used_at: p.lastUsedAt,
  };
}

/** A verified assertion: who signed in, with which passkey, and its authentication context. */
export interface PasskeySignIn {
  user: LoginUser;
  passkey: PasskeyView;
  acr: string;
  amr: string[];
  authTime: number;
}

/**
 * A refused assertion. `unknownCredential` is set when the credential was registered in this
 * tenant and removed (a live tombstone), so the error carries
 * `webauthn_signal: {unknown_credential: true}` and the browser can drop the credential
 * (WebAuthn Level 3 §5.1.10, signalUnknownCredential). A credential the tenant never knew is
 * refused the same way without it: it may be another tenant's passkey under the shared RP ID.
 */
export class PasskeyRefused extends ApiError {
  constructor(
    message: string,
    readonly unknownCredential = false,
  ) {
    super(400, 'invalid_grant', message, unknownCredential ? { webauthn_signal: { unknown_credential: true } } : {});
  }
}

/** The passkey operations routes and pages use (implemented by PasskeyService). */
export interface Passkeys {
  readonly rpId: string;
  readonly origin: string;

  /** Options for navigator.credentials.create; throws 403 `step_up_required` when the sign-in is stale. */
  registrationOptions(p: {
    user: LoginUser;
    sessionId: string;
    authTime: number;
  }): Promise<{ challengeId: string; options: PublicKeyCredentialCreationOptionsJSON; expiresIn: number }>;

  /** Verifies an attestation and stores the passkey under `name` (1–64 characters). */
  verifyRegistration(p: {
    user: LoginUser;
    sessionId: string;
    authTime: number;
    challengeId: string;
    name: string;
    response: RegistrationResponseJSON;
  }): Promise<PasskeyView>;

  /** Options for navigator.credentials.get (discoverable credentials: no allowCredentials). */
  authenticationOptions(p: {
    tenantId: string;
    clientId: string;
    authRequestId?: string | null;
  }): Promise<{ challengeId: string; options: PublicKeyCredentialRequestOptionsJSON; expiresIn: number }>;

  /**
   * Verifies an assertion: consumes the challenge, checks origin, RP ID, signature, user
   * presence and the counter, and records the new counter and last use, all in one transaction
   * that also runs `then` (which creates the session or the artifact). Throws PasskeyRefused.
   */
  verifyAuthentication<T = void>(
    p: {
      tenantId: string;
      clientId: string;
      challengeId: string;
      response: AuthenticationResponseJSON;
      /** When given (null included), the challenge must have been made for this authorization request. */
      authRequestId?: string | null;
    },
    then?: (tx: Tx, signIn: PasskeySignIn) => Promise<T>,
  ): Promise<{ signIn: PasskeySignIn; result: T | undefined }>;

  /** The user's passkeys, newest first. */
  list(tenantId: string, userId: string): Promise<PasskeyView[]>;
  /** Renames one of the user's passkeys; false when it is not theirs. */
  rename(tenantId: string, userId: string, id: string, name: string): Promise<boolean>;
  /**
   * The user's passkeys as an operator sees them (admin API, CLI): 404 `not_found` when the
   * tenant has no such user, where `list` answers an empty list.
   */
  listForOperator(tenantId: string, userId: string): Promise<PasskeyView[]>;
  /**
   * Removes one of the user's passkeys; false when it is not theirs. The `passkey.remove` audit
   * event names `actor` (an operator helping the user) or, by default, the user.
   */
  remove(tenantId: string, userId: string, id: string, actor?: Actor): Promise<boolean>;
  /** Whether a passkey (by its row id) is still registered, for artifact redemption. */
  stillRegistered(tenantId: string, id: string): Promise<boolean>;
  /**
   * Whether a passkey (by its former row id) was removed in this tenant and its tombstone is
   * still live: only then may a refusal carry the unknown-credential signal.
   */
  removedRecently(tenantId: string, id: string): Promise<boolean>;
}

/** The longest credential id: 1023 bytes (WebAuthn §5.8.3 credentialIdLength), in base64url. */
export const MAX_CREDENTIAL_ID_CHARS = 1366;
/** A passkey's name, as its owner gives it (account page). */
export const MAX_PASSKEY_NAME = 64;

/**
 * COSE algorithms offered at registration, most preferred first: EdDSA (-8), ES256 (-7),
 * RS256 (-257), the set every platform authenticator supports (WebAuthn §5.4.3 advises -7
 * and -257 at least).
 */
const ALGORITHMS = [-8, -7, -257];

const sha256Hex = (v: string) => createHash('sha256').update(v, 'utf8').digest('hex');

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** The amr and acr of an assertion made with a credential of this kind (docs/passkeys.md). */
export function passkeyContext(
  deviceType: PasskeyView['deviceType'],
  backedUp: boolean,
): { acr: string; amr: string[] } {
  // RFC 8176 §2: hwk is a proof of possession of a hardware-secured key; a key that can be
  // synced (multiDevice, WebAuthn §6.1.3 BE flag) or is backed up is a software-secured one (swk).
  const hardware = deviceType === 'singleDevice' && !backedUp;
  return hardware
    ? { acr: ACR_PASSKEY_HARDWARE, amr: ['hwk', 'user'] }
    : { acr: ACR_PASSKEY_SYNCED, amr: ['swk', 'user'] };
}

/** What the owner sees of a stored passkey: never its public key or counter. */
export function passkeyView(r: PasskeyRow): PasskeyView {
  return {
    id: r.id,
    name: r.name,
    credentialId: r.credentialId,
    deviceType: r.deviceType,
    backedUp: r.backedUp,
    transports: r.transports,
    aaguid: r.aaguid,
    createdAt: r.createdAt,
    lastUsedAt: r.lastUsedAt,
  };
}

/** The client data an assertion or attestation signed (WebAuthn §5.8.1), or undefined when unreadable. */
function clientData(b64: unknown): { type?: unknown; challenge?: unknown; origin?: unknown } | undefined {
  if (typeof b64 !== 'string') return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(b64, 'base64url').toString('utf8'));
    return v && typeof v === 'object' ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The passkey service over the tenant's `passkeys` and `webauthn_challenges` rows. The RP ID is
 * the issuer's host name and the one accepted origin is the issuer's origin (docs/passkeys.md).
 */
export class PasskeyService implements Passkeys {
  readonly rpId: string;
  readonly origin: string;
  private readonly rpName: string;
  private readonly handleKey: Buffer;
  private readonly tombstoneTtlMs: number;

  constructor(
    private readonly db: Database,
    p: { issuer: string; secretKey: string; tombstoneTtlMs?: number },
  ) {
    const url = new URL(p.issuer);
    this.rpId = url.hostname;
    this.origin = url.origin;
    this.rpName = url.host;
    this.handleKey = deriveKey(p.secretKey, 'webauthn-user-handle');
    this.tombstoneTtlMs = p.tombstoneTtlMs ?? PASSKEY_TOMBSTONE_TTL_MS;
  }

  /**
   * Adding a sign-in method is a sensitive change: it needs a recent sign-in (re-authentication,
   * NIST SP 800-63B §6.1.2.1 binding an additional authenticator); 403 step_up_required otherwise.
   */
  private stepUp(authTime: number): void {
    if (!(Date.now() - authTime <= STEP_UP_MAX_AGE_MS))
      throw new ApiError(
        403,
        'step_up_required',
        `Adding a passkey needs a sign-in within the last ${STEP_UP_MAX_AGE_MS / 60_000} minutes; sign in again.`,
      );
  }

  /**
   * The user handle (WebAuthn §5.4.3 user.id): opaque, no personal data (§14.6.1), the same for
   * all of a user's passkeys. The first one's is kept, so it never changes with the secret key.
   */
  private userHandle(user: LoginUser, existing: PasskeyRow[]): string {
    return (
      existing[0]?.userHandle ??
      createHmac('sha256', this.handleKey).update(`${user.tenant_id}\n${user.id}`).digest('base64url')
    );
  }

  private validName(name: string): string {
    const n = name.trim();
    if (n.length < 1 || n.length > MAX_PASSKEY_NAME)
      throw new ApiError(400, 'invalid_request', `name must be 1 to ${MAX_PASSKEY_NAME} characters.`);
    return n;
  }

  async registrationOptions(p: { user: LoginUser; sessionId: string; authTime: number }) {
    this.stepUp(p.authTime);
    const scope = new TenantScope(this.db, p.user.tenant_id);
    const existing = await scope.passkeys.listByUser(p.user.id);
    const options = await generateRegistrationOptions({
      rpName: this.rpName,
      rpID: this.rpId,
      userName: p.user.email,
      userDisplayName: p.user.name,
      userID: Buffer.from(this.userHandle(p.user, existing), 'base64url'),
      timeout: PASSKEY_CHALLENGE_TTL_MS,
      attestationType: 'none',
      // WebAuthn §5.4.3: the authenticator refuses to make a second credential for this account.
      excludeCredentials: existing.map((k) => ({ id: k.credentialId, transports: k.transports })),
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'preferred' },
      supportedAlgorithmIDs: ALGORITHMS,
    });
    const challengeId = await this.saveChallenge(p.user.tenant_id, {
      purpose: 'registration',
      challenge: options.challenge,
      userId: p.user.id,
      sessionId: p.sessionId,
    });
    return { challengeId, options, expiresIn: PASSKEY_CHALLENGE_TTL_MS / 1000 };
  }

  async verifyRegistration(p: {
    user: LoginUser;
    sessionId: string;
    authTime: number;
    challengeId: string;
    name: string;
    response: RegistrationResponseJSON;
  }): Promise<PasskeyView> {
    this.stepUp(p.authTime);
    const name = this.validName(p.name);
    const scope = new TenantScope(this.db, p.user.tenant_id);
    const ch = await this.takeChallenge(scope, p.challengeId, 'registration', (c) => {
      return c.userId === p.user.id && c.sessionId === p.sessionId;
    });
    this.checkClientData(p.response?.response?.clientDataJSON, 'webauthn.create', ch.challenge);
    let verified;
    try {
      verified = await verifyRegistrationResponse({
        response: p.response,
        expectedChallenge: ch.challenge,
        expectedOrigin: this.origin,
        expectedRPID: this.rpId,
        // 'preferred' at registration: a passkey without user verification is still a passkey.
        requireUserVerification: false,
        supportedAlgorithmIDs: ALGORITHMS,
      });
    } catch (e) {
      throw new PasskeyRefused(`The passkey registration was refused: ${(e as Error).message}`);
    }
    if (!verified.verified)
      throw new PasskeyRefused('The passkey registration was refused: its attestation did not verify.');
    const info = verified.registrationInfo;
    const credentialId = info.credential.id;
    if (credentialId.length > MAX_CREDENTIAL_ID_CHARS)
      throw new PasskeyRefused('The passkey registration was refused: its credential id is longer than 1023 bytes.');
    const existing = await scope.passkeys.listByUser(p.user.id);
    const row: PasskeyRow = {
      id: newId('pk'),
      userId: p.user.id,
      credentialId,
      credentialHash: sha256Hex(credentialId),
      userHandle: this.userHandle(p.user, existing),
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      counter: info.credential.counter,
      transports: (p.response.response.transports ?? []).filter((t) => typeof t === 'string').slice(0, 8),
      deviceType: info.credentialDeviceType,
      backedUp: info.credentialBackedUp,
      aaguid: info.aaguid,
      name,
      createdAt: Date.now(),
      lastUsedAt: null,
    };
    try {
      await this.db.transaction(async (tx) => {
        await scope.in(tx).passkeys.insert(row);
        await audit(
          tx,
          { type: 'user', id: p.user.id },
          {
            tenantId: p.user.tenant_id,
            action: 'passkey.register',
            targetType: 'passkey',
            targetId: row.id,
            summary: { name, device_type: row.deviceType, backed_up: row.backedUp, aaguid: row.aaguid },
          },
        );
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw new PasskeyRefused('This passkey is already registered.');
      throw e;
    }
    return passkeyView(row);
  }

  async authenticationOptions(p: { tenantId: string; clientId: string; authRequestId?: string | null }) {
    // Discoverable credentials (WebAuthn §5.4.4 allowCredentials empty): the authenticator
    // offers the user's passkeys, so the service learns who signs in only from the assertion.
    const options = await generateAuthenticationOptions({
      rpID: this.rpId,
      userVerification: 'preferred',
      timeout: PASSKEY_CHALLENGE_TTL_MS,
    });
    const challengeId = await this.saveChallenge(p.tenantId, {
      purpose: 'authentication',
      challenge: options.challenge,
      clientId: p.clientId,
      authRequestId: p.authRequestId ?? null,
    });
    return { challengeId, options, expiresIn: PASSKEY_CHALLENGE_TTL_MS / 1000 };
  }

  async verifyAuthentication<T = void>(
    p: {
      tenantId: string;
      clientId: string;
      challengeId: string;
      response: AuthenticationResponseJSON;
      authRequestId?: string | null;
    },
    then?: (tx: Tx, signIn: PasskeySignIn) => Promise<T>,
  ): Promise<{ signIn: PasskeySignIn; result: T | undefined }> {
    const scope = new TenantScope(this.db, p.tenantId);
    // The challenge is spent before anything else is looked at: a refused assertion cannot be
    // tried again with the same challenge (WebAuthn §13.4.3).
    const ch = await this.takeChallenge(
      scope,
      p.challengeId,
      'authentication',
      (c) => c.clientId === p.clientId && (p.authRequestId === undefined || c.authRequestId === p.authRequestId),
    );
    const r = p.response;
    this.checkClientData(r?.response?.clientDataJSON, 'webauthn.get', ch.challenge);
    if (typeof r.id !== 'string' || r.id !== r.rawId)
      throw new PasskeyRefused('credential.id and credential.rawId must be the same base64url value.');
    // WebAuthn §7.2 step 6: the credential must be one registered here.
    const hash = sha256Hex(r.id);
    const row = await scope.passkeys.byCredentialHash(hash);
    if (!row)
      // The signal only for a credential this tenant removed (a live tombstone): the RP ID is
      // the issuer's host, shared by every tenant, so a credential this tenant never knew may be
      // another tenant's working passkey, which the browser must not be told to delete
      // (WebAuthn L3 §5.1.10: the RP signals only credentials it knows to be gone).
      throw new PasskeyRefused(
        'This passkey is not registered with this service.',
        await scope.passkeyTombstones.liveForCredential(hash, Date.now()),
      );
    // §7.2 step 6: when the authenticator returns the user handle, it must be the credential's owner's.
    const handle = r.response.userHandle;
    if (handle && !sameText(handle, row.userHandle))
      throw new PasskeyRefused('credential.response.userHandle does not belong to this passkey.');
    const user = await scope.users.find(row.userId);
    if (!user || user.status !== 'active') throw new ApiError(403, 'access_denied', 'This account is disabled.');
    let verified;
    try {
      verified = await verifyAuthenticationResponse({
        response: r,
        expectedChallenge: ch.challenge,
        expectedOrigin: this.origin,
        expectedRPID: this.rpId,
        expectedType: 'webauthn.get',
        // The counter is checked below, after the signature, with our own policy and audit.
        credential: { id: row.credentialId, publicKey: Buffer.from(row.publicKey, 'base64url'), counter: 0 },
        requireUserVerification: false,
      });
    } catch (e) {
      throw new PasskeyRefused(`The passkey assertion was refused: ${(e as Error).message}`);
    }
    if (!verified.verified)
      throw new PasskeyRefused('The passkey assertion was refused: its signature did not verify.');
    const info = verified.authenticationInfo;
    // WebAuthn §6.1.1 / §7.2 step 22: when either counter is non-zero the new one must be
    // greater; else the authenticator may have been cloned. 0 and 0: an authenticator that
    // does not count (many synced passkeys).
    if ((info.newCounter > 0 || row.counter > 0) && info.newCounter <= row.counter) {
      await audit(
        this.db,
        { type: 'user', id: row.userId },
        {
          tenantId: p.tenantId,
          action: 'passkey.counter_regression',
          targetType: 'passkey',
          targetId: row.id,
          outcome: 'failure',
          summary: { stored_counter: row.counter, presented_counter: info.newCounter },
        },
      );
      throw new PasskeyRefused(
        'The passkey assertion was refused: its signature counter did not increase (possibly cloned authenticator).',
      );
    }
    const authTime = Date.now();
    const ctx = passkeyContext(info.credentialDeviceType, info.credentialBackedUp);
    const view = passkeyView({
      ...row,
      counter: info.newCounter,
      deviceType: info.credentialDeviceType,
      backedUp: info.credentialBackedUp,
      lastUsedAt: authTime,
    });
    const signIn: PasskeySignIn = { user, passkey: view, acr: ctx.acr, amr: ctx.amr, authTime };
    const result = await this.db.transaction(async (tx) => {
      // One winner between two assertions that read the same counter.
      if (
        !(await scope.in(tx).passkeys.recordUse(row.id, row.counter, {
          counter: info.newCounter,
          backedUp: info.credentialBackedUp,
          now: authTime,
        }))
      )
        throw new PasskeyRefused('The passkey was used by another sign-in at the same moment; try again.');
      return then ? await then(tx, signIn) : undefined;
    });
    return { signIn, result };
  }

  async list(tenantId: string, userId: string): Promise<PasskeyView[]> {
    return (await new TenantScope(this.db, tenantId).passkeys.listByUser(userId)).map(passkeyView);
  }

  async rename(tenantId: string, userId: string, id: string, name: string): Promise<boolean> {
    const n = this.validName(name);
    return new TenantScope(this.db, tenantId).passkeys.rename(userId, id, n);
  }

  async listForOperator(tenantId: string, userId: string): Promise<PasskeyView[]> {
    const scope = new TenantScope(this.db, tenantId);
    // An operator asking about a user who does not exist should hear so, not see "no passkeys".
    if ((await scope.users.status(userId)) === undefined) throw notFound(`User ${userId}`);
    return (await scope.passkeys.listByUser(userId)).map(passkeyView);
  }

  async remove(tenantId: string, userId: string, id: string, actor?: Actor): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const row = await scope.passkeys.get(userId, id);
      const removed = !!row && (await scope.passkeys.remove(userId, id));
      if (removed) {
        // The tombstone commits with the removal: from now on (for PASSKEY_TOMBSTONE_TTL_MS) an
        // assertion or an artifact with this passkey is refused with the unknown-credential signal.
        const now = Date.now();
        await scope.passkeyTombstones.record({
          passkeyId: row.id,
          credentialHash: row.credentialHash,
          removedAt: now,
          expiresAt: now + this.tombstoneTtlMs,
        });
        await audit(
          tx,
          actor ?? { type: 'user', id: userId },
          // The owner is in the summary: an operator's removal names the user it was done for.
          { tenantId, action: 'passkey.remove', targetType: 'passkey', targetId: id, summary: { user_id: userId } },
        );
      }
      return removed;
    });
  }

  stillRegistered(tenantId: string, id: string): Promise<boolean> {
    return new TenantScope(this.db, tenantId).passkeys.exists(id);
  }

  removedRecently(tenantId: string, id: string): Promise<boolean> {
    return new TenantScope(this.db, tenantId).passkeyTombstones.liveForPasskey(id, Date.now());
  }

  private async saveChallenge(
    tenantId: string,
    c: {
      purpose: 'registration' | 'authentication';
      challenge: string;
      userId?: string;
      sessionId?: string;
      clientId?: string;
      authRequestId?: string | null;
    },
  ): Promise<string> {
    const id = newId('wac', 18);
    const now = Date.now();
    await new TenantScope(this.db, tenantId).webauthnChallenges.insert({
      id,
      purpose: c.purpose,
      challenge: c.challenge,
      userId: c.userId ?? null,
      sessionId: c.sessionId ?? null,
      clientId: c.clientId ?? null,
      authRequestId: c.authRequestId ?? null,
      createdAt: now,
      expiresAt: now + PASSKEY_CHALLENGE_TTL_MS,
    });
    return id;
  }

  /** Finds and consumes a live challenge of this purpose and binding (one winner), or refuses. */
  private async takeChallenge(
    scope: TenantScope,
    id: string,
    purpose: 'registration' | 'authentication',
    bound: (c: WebauthnChallengeRow) => boolean,
  ) {
    const ch = await scope.webauthnChallenges.find(id);
    if (
      !ch ||
      ch.purpose !== purpose ||
      !bound(ch) ||
      !(await scope.webauthnChallenges.consume(id, purpose, Date.now()))
    )
      throw new PasskeyRefused('challenge_id is unknown, expired, already used, or not bound to this request.');
    return ch;
  }

  /**
   * WebAuthn §7.1 steps 7–9 / §7.2 steps 11–13, checked here first for a clear refusal: the
   * type, our challenge, and our origin compared exactly (another port, scheme or a suffix
   * differs). The library checks them again.
   */
  private checkClientData(b64: unknown, type: string, challenge: string): void {
    const c = clientData(b64);
    if (!c) throw new PasskeyRefused('credential.response.clientDataJSON is not base64url JSON.');
    if (c.type !== type) throw new PasskeyRefused(`credential.response.clientDataJSON type must be ${type}.`);
    if (typeof c.challenge !== 'string' || !sameText(c.challenge, challenge))
      throw new PasskeyRefused('credential.response.clientDataJSON challenge is not the challenge of challenge_id.');
    if (c.origin !== this.origin)
      throw new PasskeyRefused(`credential.response.clientDataJSON origin must be exactly ${this.origin}.`);
  }
}
