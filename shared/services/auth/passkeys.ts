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
import { createHash, createHmac } from 'node:crypto';
import type { RegistrationResponseJSON } from '@simplewebauthn/server';
import { deriveKey, newId, sameText } from '../../crypto.js';
import { isUniqueViolation, type Database, type Tx } from '../../db/index.js';
import { ApiError, notFound } from '../../errors.js';
import { userDisabled, withReason } from './history.js';
import { TenantScope, type LoginUser, type PasskeyRow } from '../../repositories/index.js';
import { audit, type Actor } from '../audit.js';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from './webauthn-lazy.js';
import {
  MAX_CREDENTIAL_ID_CHARS,
  MAX_PASSKEY_NAME,
  PASSKEY_CHALLENGE_TTL_MS,
  PASSKEY_PROVIDER,
  PASSKEY_TOMBSTONE_TTL_MS,
  PasskeyRefused,
  STEP_UP_MAX_AGE_MS,
  passkeyContext,
  passkeyView,
  type PasskeyAssertion,
  type PasskeyProof,
  type PasskeySignIn,
  type PasskeyView,
  type Passkeys,
} from './passkey-contract.js';
import { checkClientData, saveChallenge, takeChallenge } from './webauthn-challenges.js';

// The contract is re-exported so that its callers keep importing it from here.
export {
  ACR_PASSKEY_HARDWARE,
  ACR_PASSKEY_SYNCED,
  MAX_CREDENTIAL_ID_CHARS,
  MAX_PASSKEY_NAME,
  PASSKEY_CHALLENGE_TTL_MS,
  PASSKEY_PROVIDER,
  PASSKEY_TOMBSTONE_TTL_MS,
  PasskeyRefused,
  STEP_UP_MAX_AGE_MS,
  passkeyContext,
  passkeyView,
  publicPasskeyRecord,
  type PasskeyAssertion,
  type PasskeyProof,
  type PasskeySignIn,
  type PasskeyView,
  type Passkeys,
} from './passkey-contract.js';

/**
 * COSE algorithms offered at registration, most preferred first: EdDSA (-8), ES256 (-7),
 * RS256 (-257), the set every platform authenticator supports (WebAuthn §5.4.3 advises -7
 * and -257 at least).
 */
const ALGORITHMS = [-8, -7, -257];

const sha256Hex = (v: string) => createHash('sha256').update(v, 'utf8').digest('hex');

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
    const challengeId = await saveChallenge(this.db, p.user.tenant_id, {
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
    const ch = await takeChallenge(scope, p.challengeId, 'registration', (c) => {
      return c.userId === p.user.id && c.sessionId === p.sessionId;
    });
    checkClientData(p.response?.response?.clientDataJSON, 'webauthn.create', ch.challenge, this.origin);
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
    const challengeId = await saveChallenge(this.db, p.tenantId, {
      purpose: 'authentication',
      challenge: options.challenge,
      clientId: p.clientId,
      authRequestId: p.authRequestId ?? null,
    });
    return { challengeId, options, expiresIn: PASSKEY_CHALLENGE_TTL_MS / 1000 };
  }

  async verifyAuthentication(p: PasskeyAssertion): Promise<{ signIn: PasskeySignIn }> {
    const proof = await this.prove(p);
    await this.db.transaction((tx) => proof.spend(tx));
    return { signIn: proof.signIn };
  }

  async prove(p: PasskeyAssertion): Promise<PasskeyProof> {
    const scope = new TenantScope(this.db, p.tenantId);
    // The challenge is spent before anything else is looked at: a refused assertion cannot be
    // tried again with the same challenge (WebAuthn §13.4.3).
    const ch = await takeChallenge(
      scope,
      p.challengeId,
      'authentication',
      (c) => c.clientId === p.clientId && (p.authRequestId === undefined || c.authRequestId === p.authRequestId),
    );
    const r = p.response;
    checkClientData(r?.response?.clientDataJSON, 'webauthn.get', ch.challenge, this.origin);
    if (typeof r.id !== 'string' || r.id !== r.rawId)
      throw withReason(
        new PasskeyRefused('credential.id and credential.rawId must be the same base64url value.'),
        'assertion_invalid',
      );
    // WebAuthn §7.2 step 6: the credential must be one registered here.
    const hash = sha256Hex(r.id);
    const row = await scope.passkeys.byCredentialHash(hash);
    if (!row)
      // The signal only for a credential this tenant removed (a live tombstone): the RP ID is
      // the issuer's host, shared by every tenant, so a credential this tenant never knew may be
      // another tenant's working passkey, which the browser must not be told to delete
      // (WebAuthn L3 §5.1.10: the RP signals only credentials it knows to be gone).
      throw withReason(
        new PasskeyRefused(
          'This passkey is not registered with this service.',
          await scope.passkeyTombstones.liveForCredential(hash, Date.now()),
        ),
        'unknown_credential',
      );
    // §7.2 step 6: when the authenticator returns the user handle, it must be the credential's owner's.
    const handle = r.response.userHandle;
    if (handle && !sameText(handle, row.userHandle))
      throw withReason(
        new PasskeyRefused('credential.response.userHandle does not belong to this passkey.'),
        'user_handle_mismatch',
      );
    const user = await scope.users.find(row.userId);
    if (!user || user.status !== 'active') throw withReason(userDisabled(), 'user_disabled', row.userId);
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
      throw withReason(
        new PasskeyRefused(`The passkey assertion was refused: ${(e as Error).message}`),
        'signature_invalid',
        row.userId,
      );
    }
    if (!verified.verified)
      throw withReason(
        new PasskeyRefused('The passkey assertion was refused: its signature did not verify.'),
        'signature_invalid',
        row.userId,
      );
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
      throw withReason(
        new PasskeyRefused(
          'The passkey assertion was refused: its signature counter did not increase (possibly cloned authenticator).',
        ),
        'counter_regression',
        row.userId,
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
    return {
      acr: ctx.acr,
      amr: ctx.amr,
      authTime,
      provider: PASSKEY_PROVIDER,
      passkeyId: row.id,
      signIn,
      spend: async (tx: Tx) => {
        // One winner between two assertions that read the same counter.
        if (
          !(await scope.in(tx).passkeys.recordUse(row.id, row.counter, {
            counter: info.newCounter,
            backedUp: info.credentialBackedUp,
            now: authTime,
          }))
        )
          throw withReason(
            new PasskeyRefused('The passkey was used by another sign-in at the same moment; try again.'),
            'concurrent_use',
            row.userId,
          );
        return { user };
      },
    };
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
}
