/**
 * The JSON bodies of the passkey endpoints the pages' script calls (docs/passkeys.md,
 * "Pages"): the login page's (bound to the authorization request and its CSRF token, as the
 * login forms are) and the account page's (bound to the session's CSRF token).
 *
 * The credentials are the browser's PublicKeyCredential JSON (WebAuthn Level 3 §5.1,
 * `toJSON()`; what @simplewebauthn/browser returns): records a later WebAuthn level may extend,
 * so unknown members are tolerated; the verifier checks the content. The bounds only keep a
 * body sane: a credential id is at most 1023 bytes (§5.8.3), so 1364 base64url characters.
 */
import { z } from 'zod';

const b64url = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[A-Za-z0-9_-]+$/, 'must be base64url without padding');

const credentialBase = {
  id: b64url(1400),
  rawId: b64url(1400),
  type: z.literal('public-key'),
  clientExtensionResults: z.looseObject({}).optional().default({}),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
};

export const RegistrationCredential = z.looseObject({
  ...credentialBase,
  response: z.looseObject({
    clientDataJSON: b64url(16_384),
    attestationObject: b64url(65_536),
    authenticatorData: b64url(65_536).optional(),
    transports: z.array(z.string().max(32)).max(16).optional(),
    publicKeyAlgorithm: z.number().int().optional(),
    publicKey: b64url(8_192).optional(),
  }),
});

export const AuthenticationCredential = z.looseObject({
  ...credentialBase,
  response: z.looseObject({
    clientDataJSON: b64url(16_384),
    authenticatorData: b64url(16_384),
    signature: b64url(4_096),
    userHandle: b64url(1_024).nullable().optional(),
  }),
});

/** The login forms' binding: the authorization request (`challenge`) and its CSRF token. */
const loginBinding = {
  challenge: z.string().min(1).max(200),
  csrf: z.string().min(1).max(200),
};

export const LoginPasskeyOptionsBody = z.strictObject(loginBinding);

export const LoginPasskeyVerifyBody = z.strictObject({
  ...loginBinding,
  challenge_id: z.string().min(1).max(200),
  credential: AuthenticationCredential,
});

export const LoginPasskeyResult = z.object({ redirect_url: z.string() });

/** The options the page hands to navigator.credentials (the JSON form of WebAuthn §5.4 / §5.5). */
export const PasskeyOptionsResult = z.object({
  challenge_id: z.string(),
  options: z.looseObject({}),
  expires_in: z.int(),
});

export const AccountCsrfBody = z.strictObject({ csrf: z.string().min(1).max(200) });

export const AccountPasskeyCreateBody = z.strictObject({
  csrf: z.string().min(1).max(200),
  name: z.string().trim().min(1).max(64),
  challenge_id: z.string().min(1).max(200),
  credential: RegistrationCredential,
});

/** A passkey as the account page's JSON shows it (public data only). */
export const AccountPasskeyRecord = z.object({
  id: z.string(),
  name: z.string(),
  credential_id: z.string(),
  device_type: z.enum(['singleDevice', 'multiDevice']),
  backed_up: z.boolean(),
  transports: z.array(z.string()),
  created_at: z.int(),
  last_used_at: z.int().nullable(),
});
