/**
 * openid-client configurations for a tenant's upstream OpenID providers: discovery
 * (OpenID Connect Discovery 1.0 §4) and the provider's JWKS, fetched through the SSRF-safe
 * outbound fetcher that ID-JAG discovery uses (shared/net/outbound.ts, openid-client's
 * `customFetch`), and the client authentication the provider supports. The same configuration
 * serves the sign-in (authorization code grant) and the refresh of upstream tokens
 * (`oidc.refreshTokenGrant(config, refreshToken)`).
 *
 * Configurations are cached per provider for `ttlMs` (and dropped when the provider's row
 * changes), so a login does not fetch discovery each time; openid-client keeps the JWKS of a
 * configuration and fetches it again on an unknown `kid`.
 */
import * as oidc from 'openid-client';
import { OutboundError, safeFetch, type OutboundPolicy } from '../../net/outbound.js';
import type { UpstreamIdpRow } from '../../repositories/index.js';
import type { UpstreamSealer } from './sealing.js';

/** What a configuration is made from: a provider's registration with its secret opened. */
export interface UpstreamClientInput {
  /** The provider's id (`uip_…`), the cache key. */
  id: string;
  issuer: string;
  client_id: string;
  client_secret: string;
  /** The row's updated_at: a changed row is configured again. */
  updated_at: number;
}

/** Discovery of an issuer failed or its metadata does not fit; `message` is safe to show an operator. */
export class UpstreamDiscoveryError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UpstreamDiscoveryError';
  }
}

export const DISCOVERY_TTL_MS = 10 * 60_000;

/** Metadata the broker needs from a provider (OpenID Connect Discovery 1.0 §3). */
function checkMetadata(m: oidc.ServerMetadata): void {
  for (const f of ['authorization_endpoint', 'token_endpoint', 'jwks_uri'] as const) {
    if (typeof m[f] !== 'string' || !m[f]) throw new UpstreamDiscoveryError(`its discovery document has no ${f}`);
  }
  if (Array.isArray(m.response_types_supported) && !m.response_types_supported.includes('code'))
    throw new UpstreamDiscoveryError('it does not support the authorization code flow (response_types_supported)');
  // RFC 7636 §4.2: we always send S256; a provider that lists its methods must list it.
  if (Array.isArray(m.code_challenge_methods_supported) && !m.code_challenge_methods_supported.includes('S256'))
    throw new UpstreamDiscoveryError('it does not support PKCE with S256 (code_challenge_methods_supported)');
}

/**
 * Our client authentication at the provider's token endpoint (OIDC Core §9): client_secret_basic
 * when the provider supports it (the default when it lists nothing, RFC 8414 §2), else
 * client_secret_post.
 */
export function clientAuthFor(m: oidc.ServerMetadata, secret: string): oidc.ClientAuth {
  const supported = m.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
  if (supported.includes('client_secret_basic')) return oidc.ClientSecretBasic(secret);
  if (supported.includes('client_secret_post')) return oidc.ClientSecretPost(secret);
  throw new UpstreamDiscoveryError(
    'it supports neither client_secret_basic nor client_secret_post at its token endpoint',
  );
}

/** The operator-safe reason of a failed discovery. */
function describe(e: unknown): string {
  if (e instanceof UpstreamDiscoveryError) return e.message;
  if (e instanceof OutboundError) return e.message;
  const cause = (e as { cause?: unknown }).cause;
  if (cause instanceof OutboundError) return cause.message;
  return (e as Error).message ?? String(e);
}

export class UpstreamClients {
  readonly #fetch: oidc.CustomFetch;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #cache = new Map<string, { updatedAt: number; at: number; config: Promise<oidc.Configuration> }>();

  constructor(opts: { policy: OutboundPolicy; ttlMs?: number; now?: () => number }) {
    this.#fetch = safeFetch(opts.policy);
    this.#ttlMs = opts.ttlMs ?? DISCOVERY_TTL_MS;
    this.#now = opts.now ?? Date.now;
  }

  /**
   * Fetches and checks the discovery document of `issuer` (its `issuer` must equal the one
   * asked, OIDC Discovery §4.3). Throws UpstreamDiscoveryError with an operator-safe message.
   */
  async discover(issuer: string): Promise<oidc.ServerMetadata> {
    try {
      const probe = await oidc.discovery(new URL(issuer), 'probe', undefined, oidc.None(), {
        [oidc.customFetch]: this.#fetch,
      });
      const m = probe.serverMetadata();
      checkMetadata(m);
      return m;
    } catch (e) {
      throw new UpstreamDiscoveryError(`discovery of ${issuer} failed: ${describe(e)}`, { cause: e });
    }
  }

  /** The openid-client configuration of a provider (cached). */
  configuration(p: UpstreamClientInput): Promise<oidc.Configuration> {
    const hit = this.#cache.get(p.id);
    const now = this.#now();
    if (hit && hit.updatedAt === p.updated_at && now - hit.at < this.#ttlMs) return hit.config;
    const config = this.discover(p.issuer).then((m) => {
      const c = new oidc.Configuration(m, p.client_id, undefined, clientAuthFor(m, p.client_secret));
      c[oidc.customFetch] = this.#fetch;
      // The ID token's signature is checked against the provider's JWKS (fetched through the
      // same fetcher), not only trusted because it came over TLS from the token endpoint.
      oidc.enableNonRepudiationChecks(c);
      return c;
    });
    this.#cache.set(p.id, { updatedAt: p.updated_at, at: now, config });
    // A failure is not cached: the next login tries again.
    config.catch(() => {
      if (this.#cache.get(p.id)?.config === config) this.#cache.delete(p.id);
    });
    return config;
  }

  /** Forgets a provider's configuration (after a change of its row). */
  invalidate(providerId: string): void {
    this.#cache.delete(providerId);
  }
}

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
