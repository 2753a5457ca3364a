/**
 * Adapter to the upstream identity provider services: a provider's client credentials, and
 * the sealing of a link's tokens. Provisional until the upstream identity provider data layer
 * is merged; then both delegate to it.
 */
import { SecretBox } from '../../crypto.js';
import type { Database } from '../../db/index.js';
import type { LinkSealing, ProviderCredentials } from './bridge.js';
import type { LinkRef } from './scan.js';

export function upstreamCredentials(_ds: Database, _secretKey: string): (link: LinkRef) => Promise<ProviderCredentials> {
  return () => Promise.reject(new Error('upstream identity providers are not available'));
}

export function upstreamLinkSealing(secretKey: string): LinkSealing {
  const box = new SecretBox(secretKey, 'upstream-link-tokens');
  const aad = (l: LinkRef, f: string) => `${l.tenantId}:${l.linkId}:${f}`;
  return {
    openRefreshToken: (l, sealed) => box.open(sealed, aad(l, 'refresh')),
    seal: (l, t) => ({
      access: box.seal(t.accessToken, aad(l, 'access')),
      refresh: t.refreshToken === null ? null : box.seal(t.refreshToken, aad(l, 'refresh')),
      id: t.idToken === null ? null : box.seal(t.idToken, aad(l, 'id')),
      keyId: 'v1',
    }),
  };
}
