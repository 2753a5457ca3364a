/**
 * Request and response shapes of the passkey endpoints (docs/passkeys.md). The credentials are
 * the JSON a browser's PublicKeyCredential.toJSON() gives (WebAuthn Level 3 §5.1.8,
 * RegistrationResponseJSON / AuthenticationResponseJSON): checked structurally here, every
 * string bounded and base64url where the spec says so, so junk is a 400 naming the field
 * before anything is decoded. Unknown members of a credential are dropped (browsers add
 * members over time); the request bodies around them are strict.
 */
import { z } from 'zod';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { PKCE_VALUE } from '../services/auth/pkce.js';
import { MAX_CREDENTIAL_ID_CHARS, publicPasskeyRecord, type PasskeyView } from '../services/auth/passkeys.js';

/** A base64url string (RFC 4648 §5, no padding) of at most `max` characters. */
export const base64url = (max: number, min = 1) =>
  z
    .string()
    .min(min)
    .max(max)
    .regex(/^[A-Za-z0-9_-]*$/, 'must be base64url (RFC 4648 §5) without padding');

/** A credential id: 16 to 1023 bytes (WebAuthn §5.8.3 credentialIdLength, §4 "Credential ID"). */
const credentialId = base64url(MAX_CREDENTIAL_ID_CHARS);
/** Client data JSON: a small object, but with extensions it can grow; 16 KiB is generous. */
const clientDataJSON = base64url(16_384);
const clientExtensionResults = z.record(z.string(), z.unknown()).optional();
const authenticatorAttachment = z.enum(['platform', 'cross-platform']).optional();

/** AuthenticationResponseJSON (WebAuthn L3 §5.1.8): an assertion of navigator.credentials.get. */
export const AuthenticationCredential = z
  .object({
    id: credentialId,
    rawId: credentialId,
    type: z.literal('public-key'),
    response: z.object({
      clientDataJSON,
      authenticatorData: base64url(16_384, 50),
      signature: base64url(2048),
      // user.id is at most 64 bytes (WebAuthn §5.4.3): 86 characters of base64url.
      userHandle: base64url(86).nullish(),
    }),
    clientExtensionResults,
    authenticatorAttachment,
  })
  .transform((c): AuthenticationResponseJSON => ({
    ...c,
    response: { ...c.response, userHandle: c.response.userHandle ?? undefined },
    clientExtensionResults: c.clientExtensionResults ?? {},
  }));

/** RegistrationResponseJSON (WebAuthn L3 §5.1.8): an attestation of navigator.credentials.create. */
export const RegistrationCredential = z
  .object({
    id: credentialId,
    rawId: credentialId,
    type: z.literal('public-key'),
    response: z.object({
      clientDataJSON,
      attestationObject: base64url(65_536),
      authenticatorData: base64url(16_384).optional(),
      transports: z.array(z.string().min(1).max(32)).max(16).optional(),
      publicKeyAlgorithm: z.number().int().optional(),
      publicKey: base64url(16_384).optional(),
    }),
    clientExtensionResults,
    authenticatorAttachment,
  })
  .transform((c): RegistrationResponseJSON => ({ ...c, clientExtensionResults: c.clientExtensionResults ?? {} }));

const clientId = z.string().min(1).max(128);
const authorizationChallengeId = z.string().min(1).max(64);
/** The id of a WebAuthn challenge the service handed out (`wac_` and 24 base64url characters). */
export const challengeId = z.string().min(1).max(64);

/** POST /api/v1/auth/direct/passkey/options */
export const PasskeyOptionsBody = z.strictObject({
  client_id: clientId,
  authorization_challenge_id: authorizationChallengeId.optional(),
});

/** POST /api/v1/auth/direct/passkey/verify */
export const PasskeyVerifyBody = z.strictObject({
  client_id: clientId,
  challenge_id: challengeId,
  credential: AuthenticationCredential,
  code_challenge: z.string().regex(PKCE_VALUE, 'must be a PKCE S256 challenge (RFC 7636 §4.2)'),
  code_challenge_method: z.literal('S256').optional(),
  channel: z.literal('browser').optional(),
  authorization_challenge_id: authorizationChallengeId.optional(),
});

/** PublicKeyCredentialRequestOptionsJSON as the service makes it (discoverable: no allowCredentials). */
export const RequestOptionsJSON = z.looseObject({
  challenge: z.string(),
  rpId: z.string().optional(),
  timeout: z.number().int().optional(),
  userVerification: z.string().optional(),
});

export const PasskeyOptionsResult = z.object({
  ok: z.boolean(),
  challenge_id: z.string(),
  public_key: RequestOptionsJSON,
  expires_in: z.number().int(),
});

export const PasskeyArtifactResult = z.object({
  ok: z.boolean(),
  direct_auth_artifact: z.string(),
  expires_in: z.number().int(),
});

/** The signal of an error about a credential (WebAuthn L3 §5.1.10 signalUnknownCredential). */
export const WebauthnSignal = z.object({ unknown_credential: z.boolean() });

/**
 * A passkey as an operator sees it (admin API, CLI; docs/passkeys.md "Operators"): public data
 * only, never the public key, the signature counter or the user handle. The AAGUID names the
 * authenticator model (all zeros when it is not attested), which helps tell the devices apart.
 */
export const AdminPasskeyRecord = z.object({
  id: z.string(),
  user_id: z.string(),
  name: z.string(),
  credential_id: z.string(),
  device_type: z.enum(['singleDevice', 'multiDevice']),
  backed_up: z.boolean(),
  transports: z.array(z.string()),
  aaguid: z.string(),
  created_at: z.int(),
  last_used_at: z.int().nullable(),
});
export type AdminPasskeyRecord = z.infer<typeof AdminPasskeyRecord>;

export const AdminPasskeyList = z.object({ passkeys: z.array(AdminPasskeyRecord) });

/** The operator's view of one of the user's passkeys (AdminPasskeyRecord). */
export function adminPasskeyRecord(userId: string, p: PasskeyView): AdminPasskeyRecord {
  const { id, ...rest } = publicPasskeyRecord(p);
  return { id, user_id: userId, ...rest };
}
