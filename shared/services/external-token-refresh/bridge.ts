/**
 * The external identity-provider bridge of the refresh scan: the upstream's token endpoint
 * (found by OpenID Connect Discovery §4, cached), a refresh_token grant (RFC 6749 §6) with the
 * provider's client credentials (client_secret_basic, RFC 6749 §2.3.1), SSRF-safe, and the
 * answer classified for the scan: tokens, `invalid_grant`, retryable (429, 5xx, no answer) or
 * another error. Credentials and the sealing of link tokens come from the upstream identity
 * provider services (`credentials`, `sealing`), so this file holds no storage of its own.
 */
import { fetchJson, OutboundError, type OutboundPolicy } from '../../net/safe-fetch.js';
import { postForm } from '../../net/safe-post.js';
import type { LinkRef, UpstreamBridge, UpstreamRefreshResult } from './scan.js';

export interface ProviderCredentials {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

export interface LinkSealing {
  openRefreshToken(link: LinkRef, sealed: string, keyId: string | null): string;
  seal(
    link: LinkRef,
    t: { accessToken: string; refreshToken: string | null; idToken: string | null },
  ): { access: string; refresh: string | null; id: string | null; keyId: string };
}

/** How long a discovered token endpoint is used before discovery runs again. */
const METADATA_TTL_MS = 10 * 60_000;

/** RFC 6749 §2.3.1: client id and secret are form-urlencoded before the Basic encoding. */
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

export class HttpUpstreamBridge implements UpstreamBridge {
  private readonly endpoints = new Map<string, { url: string; until: number }>();

  constructor(
    private readonly deps: {
      credentials(link: LinkRef): Promise<ProviderCredentials>;
      sealing: LinkSealing;
      policy: OutboundPolicy;
    },
  ) {}

  openRefreshToken(link: LinkRef, sealed: string, keyId: string | null): string {
    return this.deps.sealing.openRefreshToken(link, sealed, keyId);
  }

  seal(link: LinkRef, t: { accessToken: string; refreshToken: string | null; idToken: string | null }) {
    return this.deps.sealing.seal(link, t);
  }

  private async tokenEndpoint(issuer: string): Promise<string> {
    const hit = this.endpoints.get(issuer);
    if (hit && hit.until > Date.now()) return hit.url;
    const meta = await fetchJson(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, this.deps.policy);
    // OIDC Discovery §4.3: the metadata must name the issuer it was fetched for.
    if (meta.issuer !== issuer) throw new Error('discovery issuer mismatch');
    if (typeof meta.token_endpoint !== 'string') throw new Error('no token_endpoint in discovery');
    this.endpoints.set(issuer, { url: meta.token_endpoint, until: Date.now() + METADATA_TTL_MS });
    return meta.token_endpoint;
  }

  async refresh(link: LinkRef, refreshToken: string): Promise<UpstreamRefreshResult> {
    let creds: ProviderCredentials;
    try {
      creds = await this.deps.credentials(link);
    } catch {
      return { kind: 'error', code: 'provider_unavailable' };
    }
    let answer;
    try {
      const url = await this.tokenEndpoint(creds.issuer);
      answer = await postForm(
        url,
        { grant_type: 'refresh_token', refresh_token: refreshToken },
        { authorization: basic(creds.clientId, creds.clientSecret) },
        this.deps.policy,
      );
    } catch (e) {
      // No answer (timeout, network, discovery down): worth another try later.
      if (e instanceof OutboundError) return { kind: 'retryable', code: `upstream_${e.reason}` };
      return { kind: 'error', code: 'upstream_metadata' };
    }
    const { status, json } = answer;
    if (status === 429 || status >= 500) return { kind: 'retryable', code: `upstream_http_${status}` };
    if (status === 200 && json && typeof json.access_token === 'string') {
      const expiresIn = Number.isInteger(json.expires_in) ? (json.expires_in as number) : undefined;
      return {
        kind: 'ok',
        accessToken: json.access_token,
        refreshToken: typeof json.refresh_token === 'string' && json.refresh_token ? json.refresh_token : undefined,
        idToken: typeof json.id_token === 'string' ? json.id_token : undefined,
        expiresIn,
      };
    }
    const error = typeof json?.error === 'string' ? json.error : undefined;
    // RFC 6749 §5.2: invalid_grant = the refresh token is invalid, expired, revoked or another client's.
    if (error === 'invalid_grant') return { kind: 'invalid_grant', code: 'invalid_grant' };
    return { kind: 'error', code: error ? `upstream_${error}`.slice(0, 64) : `upstream_http_${status}` };
  }
}
