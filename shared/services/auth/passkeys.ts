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
 */
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Tx } from '../../db/index.js';
import { ApiError } from '../../errors.js';
import type { LoginUser } from '../../repositories/index.js';

/** How long a registration or authentication challenge may be answered. */
export const PASSKEY_CHALLENGE_TTL_MS = 5 * 60_000;
/** Registration needs a sign-in this recent (step-up). */
export const STEP_UP_MAX_AGE_MS = 5 * 60_000;
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

/** A verified assertion: who signed in, with which passkey, and its authentication context. */
export interface PasskeySignIn {
  user: LoginUser;
  passkey: PasskeyView;
  acr: string;
  amr: string[];
  authTime: number;
}

/**
 * A refused assertion. `unknownCredential` is set when the credential id is not (or no longer)
 * registered, so the caller can add `webauthn_signal: {unknown_credential: true}` to the error
 * and the browser can drop the credential (WebAuthn Level 3 §5.1.10, signalUnknownCredential).
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
    p: { tenantId: string; clientId: string; challengeId: string; response: AuthenticationResponseJSON },
    then?: (tx: Tx, signIn: PasskeySignIn) => Promise<T>,
  ): Promise<{ signIn: PasskeySignIn; result: T | undefined }>;

  /** The user's passkeys, newest first. */
  list(tenantId: string, userId: string): Promise<PasskeyView[]>;
  /** Renames one of the user's passkeys; false when it is not theirs. */
  rename(tenantId: string, userId: string, id: string, name: string): Promise<boolean>;
  /** Removes one of the user's passkeys; false when it is not theirs. */
  remove(tenantId: string, userId: string, id: string): Promise<boolean>;
  /** Whether a passkey (by its row id) is still registered, for artifact redemption. */
  stillRegistered(tenantId: string, id: string): Promise<boolean>;
}
