/**
 * A software WebAuthn authenticator for HTTP tests: an ES256 key from node:crypto, `none`
 * attestation, authenticator data with the flags and signature counter the test chooses, and
 * client data with the origin the test chooses (WebAuthn §6.1 authenticator data, §6.5.4
 * attestation object, §5.8.1 client data). It answers the JSON options the service hands out
 * with the JSON a browser's `PublicKeyCredential.toJSON()` would give.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isoCBOR } from '@simplewebauthn/server/helpers';
import type { LoginUser } from '../../shared/repositories/index.js';
import type { Passkeys, PasskeyView } from '../../shared/services/auth/passkeys.js';

/** Authenticator data flags (WebAuthn §6.1). */
export const FLAGS = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40 } as const;

const b64u = (b: Uint8Array | Buffer | string) => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest();

export interface SoftOptions {
  /** The origin written into clientDataJSON; the issuer's origin by default. */
  origin?: string;
  /** The RP ID whose hash goes into the authenticator data; the options' by default. */
  rpId?: string;
  /** Backup eligible (multiDevice) and backed up: swk; neither: hwk. */
  backupEligible?: boolean;
  backedUp?: boolean;
  /** User presence / verification flags; both set by default. */
  up?: boolean;
  uv?: boolean;
  /** The signature counter to report (default: the authenticator's own, incremented per use). */
  counter?: number;
  /** The user handle to return (default: the one given at registration). */
  userHandle?: string | null;
  /** Another challenge than the options' (to test a mismatch). */
  challenge?: string;
}

/** One authenticator holding one credential (made by `register`). */
export class SoftAuthenticator {
  readonly credentialId: string;
  private readonly privateKey: KeyObject;
  private readonly cose: Uint8Array;
  /** The next counter to report when a test does not choose one; 0 never counts. */
  counter: number;
  userHandle: string | null = null;
  readonly aaguid = Buffer.alloc(16);

  constructor(
    readonly origin: string,
    readonly defaults: SoftOptions = {},
    startCounter = 0,
  ) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    const jwk = publicKey.export({ format: 'jwk' });
    // COSE_Key (RFC 9052 §7, RFC 9053 §7.1.1): kty EC2, alg ES256, crv P-256, x, y.
    this.cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    this.credentialId = b64u(randomBytes(32));
    this.counter = startCounter;
  }

  private flags(o: SoftOptions, attested: boolean): number {
    let f = 0;
    if (o.up ?? true) f |= FLAGS.UP;
    if (o.uv ?? true) f |= FLAGS.UV;
    if (o.backupEligible) f |= FLAGS.BE;
    if (o.backedUp) f |= FLAGS.BS;
    if (attested) f |= FLAGS.AT;
    return f;
  }

  private authData(rpId: string, o: SoftOptions, counter: number, attested: boolean): Buffer {
    const head = Buffer.alloc(37);
    sha256(rpId).copy(head, 0);
    head.writeUInt8(this.flags(o, attested), 32);
    head.writeUInt32BE(counter >>> 0, 33);
    if (!attested) return head;
    const id = Buffer.from(this.credentialId, 'base64url');
    const len = Buffer.alloc(2);
    len.writeUInt16BE(id.length);
    return Buffer.concat([head, this.aaguid, len, id, Buffer.from(this.cose)]);
  }

  private clientData(type: string, challenge: string, origin: string): string {
    return b64u(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** Answers registration options (navigator.credentials.create). */
  register(options: PublicKeyCredentialCreationOptionsJSON, over: SoftOptions = {}): RegistrationResponseJSON {
    const o = { ...this.defaults, ...over };
    this.userHandle = options.user.id;
    const counter = o.counter ?? this.counter;
    const authData = this.authData(o.rpId ?? options.rp.id!, o, counter, true);
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Uint8Array | Map<string, never>>([
        ['fmt', 'none'],
        ['attStmt', new Map<string, never>()],
        ['authData', authData],
      ]),
    );
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: this.clientData('webauthn.create', o.challenge ?? options.challenge, o.origin ?? this.origin),
        attestationObject: b64u(attestationObject),
        transports: ['internal', 'hybrid'],
      },
    };
  }

  /** Answers authentication options (navigator.credentials.get), signing with the credential's key. */
  assert(options: PublicKeyCredentialRequestOptionsJSON, over: SoftOptions = {}): AuthenticationResponseJSON {
    const o = { ...this.defaults, ...over };
    let counter = o.counter;
    if (counter === undefined) {
      if (this.counter > 0) this.counter += 1;
      counter = this.counter;
    }
    const authData = this.authData(o.rpId ?? options.rpId!, o, counter, false);
    const clientDataJSON = this.clientData('webauthn.get', o.challenge ?? options.challenge, o.origin ?? this.origin);
    // ES256 signatures in WebAuthn are DER (WebAuthn §6.5.5), node's default encoding.
    const signature = sign('sha256', Buffer.concat([authData, sha256(Buffer.from(clientDataJSON, 'base64url'))]), {
      key: this.privateKey,
    });
    const userHandle = o.userHandle === undefined ? this.userHandle : o.userHandle;
    return {
      id: this.credentialId,
      rawId: this.credentialId,
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON,
        authenticatorData: b64u(authData),
        signature: b64u(signature),
        ...(userHandle ? { userHandle } : {}),
      },
    };
  }
}

/**
 * Registers `auth`'s credential for `user` through the service, as the account page does after
 * a fresh sign-in (auth_time now, one session id for the challenge and the attestation).
 */
export async function registerPasskey(
  svc: Passkeys,
  user: LoginUser,
  auth: SoftAuthenticator,
  name = 'Test key',
  sessionId = 'account-page',
): Promise<PasskeyView> {
  const o = await svc.registrationOptions({ user, sessionId, authTime: Date.now() });
  return svc.verifyRegistration({
    user,
    sessionId,
    authTime: Date.now(),
    challengeId: o.challengeId,
    name,
    response: auth.register(o.options),
  });
}
