/**
 * Encryption at rest of upstream secrets: our client secret at each upstream provider and the
 * upstream access, refresh and ID tokens of each link.
 *
 * AES-256-GCM (an AEAD) under a key derived from IAM_SECRET_KEY for this purpose only
 * (HKDF, shared/crypto.ts). Each row records the id of the key that sealed it (`key_id` /
 * `secret_key_id`), so a later key can be introduced while rows sealed under an earlier one
 * still open: the key id is a fingerprint of the derived key, never the key. The additional
 * authenticated data binds each value to its table, row id and column, so a sealed value
 * copied into another row or column (by a database writer without the key) fails to open
 * instead of handing one user's token to another.
 */
import { createHmac } from 'node:crypto';
import { deriveKey, SecretBox } from '../../crypto.js';
import type { SealedLinkTokens, UpstreamLinkRow } from '../../repositories/index.js';

const PURPOSE = 'upstream-idp-tokens';

/** Which sealed column a value belongs to; part of the AAD. */
export type SealedColumn =
  | 'upstream_identity_providers.client_secret_sealed'
  | 'upstream_identity_links.access_token_sealed'
  | 'upstream_identity_links.refresh_token_sealed'
  | 'upstream_identity_links.id_token_sealed'
  | 'upstream_login_states.code_verifier_sealed';

/** The id of the key derived from `secretKey`: `usk_` and 12 bytes of an HMAC of the key. */
export function sealingKeyId(secretKey: string): string {
  const fp = createHmac('sha256', deriveKey(secretKey, `${PURPOSE}:key-id`))
    .update('iam')
    .digest()
    .subarray(0, 12);
  return `usk_${fp.toString('base64url')}`;
}

export class UnknownSealingKeyError extends Error {
  constructor(readonly keyId: string) {
    super(`no sealing key with id ${keyId} is configured`);
    this.name = 'UnknownSealingKeyError';
  }
}

/**
 * Seals with the current key; opens with any key of the ring. `secretKeys[0]` is the current
 * one; older ones open what they sealed until every row has been sealed again.
 */
export class UpstreamSealer {
  readonly keyId: string;
  readonly #boxes = new Map<string, SecretBox>();

  constructor(...secretKeys: [string, ...string[]]) {
    for (const k of secretKeys) {
      const id = sealingKeyId(k);
      if (!this.#boxes.has(id)) this.#boxes.set(id, new SecretBox(k, PURPOSE));
    }
    this.keyId = sealingKeyId(secretKeys[0]);
  }

  static aad(column: SealedColumn, rowId: string): string {
    return `${column}:${rowId}`;
  }

  /** Seals `plaintext` for `column` of row `rowId` under the current key (`this.keyId`). */
  seal(plaintext: string, column: SealedColumn, rowId: string): string {
    return this.#boxes.get(this.keyId)!.seal(plaintext, UpstreamSealer.aad(column, rowId));
  }

  /** Opens a value sealed under `keyId` for `column` of row `rowId`; throws when anything differs. */
  open(sealed: string, keyId: string, column: SealedColumn, rowId: string): string {
    const box = this.#boxes.get(keyId);
    if (!box) throw new UnknownSealingKeyError(keyId);
    return box.open(sealed, UpstreamSealer.aad(column, rowId));
  }

  /** The token columns of link `linkId`, sealed together under the current key. */
  sealLinkTokens(
    linkId: string,
    t: { accessToken: string; refreshToken?: string | null; idToken?: string | null; accessExpiresAt: number | null },
  ): SealedLinkTokens {
    return {
      access_token_sealed: this.seal(t.accessToken, 'upstream_identity_links.access_token_sealed', linkId),
      refresh_token_sealed: t.refreshToken
        ? this.seal(t.refreshToken, 'upstream_identity_links.refresh_token_sealed', linkId)
        : null,
      id_token_sealed: t.idToken ? this.seal(t.idToken, 'upstream_identity_links.id_token_sealed', linkId) : null,
      key_id: this.keyId,
      access_expires_at: t.accessExpiresAt,
    };
  }

  /** The plaintext tokens of a link row. Only the refresh path and the sign-in need them. */
  openLinkTokens(
    row: Pick<UpstreamLinkRow, 'id' | 'key_id' | 'access_token_sealed' | 'refresh_token_sealed' | 'id_token_sealed'>,
  ): {
    accessToken: string;
    refreshToken: string | null;
    idToken: string | null;
  } {
    return {
      accessToken: this.open(
        row.access_token_sealed,
        row.key_id,
        'upstream_identity_links.access_token_sealed',
        row.id,
      ),
      refreshToken: row.refresh_token_sealed
        ? this.open(row.refresh_token_sealed, row.key_id, 'upstream_identity_links.refresh_token_sealed', row.id)
        : null,
      idToken: row.id_token_sealed
        ? this.open(row.id_token_sealed, row.key_id, 'upstream_identity_links.id_token_sealed', row.id)
        : null,
    };
  }
}
