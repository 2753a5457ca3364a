/**
 * Identity brokering through a tenant's upstream OpenID providers (docs/identity-providers.md).
 * - sealing.ts: AEAD encryption at rest of our client secrets and of the upstream tokens, with a
 *   key id per row and the row id + column bound as additional data.
 * - client.ts: openid-client configurations over the SSRF-safe fetcher, for the sign-in and for
 *   refreshing upstream tokens.
 */
export {
  clientAuthFor,
  providerClientInput,
  DISCOVERY_TTL_MS,
  UpstreamClients,
  UpstreamDiscoveryError,
  type UpstreamClientInput,
} from './client.js';
export {
  ACR_UPSTREAM,
  AMR_UPSTREAM,
  UPSTREAM_STATE_TTL_MS,
  UpstreamBroker,
  UpstreamLoginError,
  type OpenedUpstreamLogin,
  type UpstreamCallback,
  type UpstreamLoginFailure,
} from './broker.js';
export {
  DEFAULT_UPSTREAM_SCOPES,
  UPSTREAM_CALLBACK_PATH,
  UpstreamIdpRegistry,
  UpstreamIdpStatusInput,
  UpstreamIdpView,
  upstreamIdpInput,
} from './registry.js';
export { sealingKeyId, UnknownSealingKeyError, UpstreamSealer, type SealedColumn } from './sealing.js';
