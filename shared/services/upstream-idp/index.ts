/**
 * Identity brokering through a tenant's upstream OpenID providers (docs/identity-providers.md).
 * - sealing.ts: AEAD encryption at rest of our client secrets and of the upstream tokens, with a
 *   key id per row and the row id + column bound as additional data.
 * - client.ts: openid-client configurations over the SSRF-safe fetcher, for the sign-in and for
 *   refreshing upstream tokens.
 */
import type { UpstreamIdpRow } from '../../repositories/index.js';
import type { UpstreamClientInput } from './client.js';
import type { UpstreamSealer } from './sealing.js';

export {
  clientAuthFor,
  DISCOVERY_TTL_MS,
  UpstreamClients,
  UpstreamDiscoveryError,
  type UpstreamClientInput,
} from './client.js';
export { sealingKeyId, UnknownSealingKeyError, UpstreamSealer, type SealedColumn } from './sealing.js';

/** A provider row with its client secret opened: what UpstreamClients.configuration takes. */
export function providerClientInput(row: UpstreamIdpRow, sealer: UpstreamSealer): UpstreamClientInput {
  return {
    id: row.id,
    issuer: row.issuer,
    client_id: row.client_id,
    client_secret: sealer.open(
      row.client_secret_sealed,
      row.secret_key_id,
      'upstream_identity_providers.client_secret_sealed',
      row.id,
    ),
    updated_at: row.updated_at,
  };
}
