/**
 * The passkeys contract: what routes, pages, the CLI and the data export see of passkeys (the
 * `Passkeys` interface, the public view of a credential, the refusal with its unknown-credential
 * signal, the authentication context of a passkey sign-in) and the limits and lifetimes they
 * share. Separate from `passkeys.ts`, which implements the WebAuthn ceremonies over the
 * repositories, so that readers of the contract do not read the implementation.
 */
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { ApiError } from '../../errors.js';
import type { LoginUser, PasskeyRow } from '../../repositories/index.js';
import type { Actor } from '../audit.js';
import type { SignInProof } from './sign-in-proof.js';

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

/** An assertion to check. */
export interface PasskeyAssertion {
  tenantId: string;
  clientId: string;
  challengeId: string;
  response: AuthenticationResponseJSON;
  /** When given (null included), the challenge must have been made for this authorization request. */
  authRequestId?: string | null;
}

/** A checked assertion: the proof a sign-in spends (sign-in-proof.ts), and what it verified. */
export interface PasskeyProof extends SignInProof {
  readonly passkeyId: string;
  readonly signIn: PasskeySignIn;
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
   * Checks an assertion (the sign-in method of passkeys, sign-in-proof.ts): consumes the
   * challenge, checks origin, RP ID, signature, user presence and the counter; the proof's
   * `spend` records the new counter and last use in the sign-in's transaction (one winner
   * between two assertions that read the same counter). Throws PasskeyRefused.
   */
  prove(p: PasskeyAssertion): Promise<PasskeyProof>;

  /** An assertion checked and its use recorded on its own, signing no one in. Throws PasskeyRefused. */
  verifyAuthentication(p: PasskeyAssertion): Promise<{ signIn: PasskeySignIn }>;

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
