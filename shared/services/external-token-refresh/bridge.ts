/**
 * The external identity-provider bridge of the refresh scan: a tenant's upstream provider (its
 * row, its client secret opened), the provider's token endpoint and client authentication from
 * its discovery document (the upstream identity provider services' cached openid-client
 * configuration), a refresh_token grant (RFC 6749 §6) over the SSRF-safe outbound path, and the
 * answer classified for the scan: tokens, `invalid_grant`, retryable (429, 5xx, no answer) or
 * another error. Tokens are opened and sealed with the links' sealing helper (key id per row,
 * row id + column as additional data).
 */
import type { Database } from '../../db/index.js';
import { OutboundError, outboundRequest, type OutboundPolicy } from '../../net/outbound.js';
import { TenantScope } from '../../repositories/index.js';
import { providerClientInput, UpstreamClients, UpstreamSealer } from '../upstream-idp/index.js';
import type { LinkRef, UpstreamBridge, UpstreamRefreshResult } from './scan.js';

/** RFC 6749 §2.3.1: client id and secret are form-urlencoded before the Basic encoding. */
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

const REFRESH = 'upstream_identity_links.refresh_token_sealed';
const ID_TOKEN = 'upstream_identity_links.id_token_sealed';

export class HttpUpstreamBridge implements UpstreamBridge {
  private readonly sealer: UpstreamSealer;
  private readonly clients: UpstreamClients;

  constructor(
    private readonly ds: Database,
    private readonly opts: { secretKey: string; policy: OutboundPolicy },
  ) {
    this.sealer = new UpstreamSealer(opts.secretKey);
    this.clients = new UpstreamClients({ policy: opts.policy });
  }

  openTokens(link: LinkRef, row: { refresh_token_sealed: string; id_token_sealed: string | null; key_id: string }) {
    return {
      refreshToken: this.sealer.open(row.refresh_token_sealed, row.key_id, REFRESH, link.linkId),
      idToken: row.id_token_sealed ? this.sealer.open(row.id_token_sealed, row.key_id, ID_TOKEN, link.linkId) : null,
    };
  }

  seal(
    link: LinkRef,
    t: { accessToken: string; refreshToken: string; idToken: string | null; accessExpiresAt: number | null },
  ) {
    return this.sealer.sealLinkTokens(link.linkId, t);
  }

  async refresh(link: LinkRef, refreshToken: string): Promise<UpstreamRefreshResult> {
    const provider = await new TenantScope(this.ds, link.tenantId).upstreamIdps.get(link.providerId);
    if (!provider || provider.status !== 'active') return { kind: 'error', code: 'provider_inactive' };
    const input = providerClientInput(provider, this.sealer);
    let tokenEndpoint: string;
    let methods: string[];
    try {
      const meta = (await this.clients.configuration(input)).serverMetadata();
      tokenEndpoint = meta.token_endpoint!;
      methods = meta.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
    } catch {
      // Discovery unreachable or unusable: the upstream may be down, try again later.
      return { kind: 'retryable', code: 'upstream_discovery' };
    }
    // OIDC Core §9: client_secret_basic when supported (the default), else client_secret_post.
    const form: Record<string, string> = { grant_type: 'refresh_token', refresh_token: refreshToken };
    const headers: Record<string, string> = {
      accept: 'application/json',
      'content-type': 'application/x-www-form-urlencoded',
    };
    if (methods.includes('client_secret_basic')) headers.authorization = basic(input.client_id, input.client_secret);
    else Object.assign(form, { client_id: input.client_id, client_secret: input.client_secret });
    let status: number;
    let json: Record<string, unknown> | undefined;
    try {
      const res = await outboundRequest(
        tokenEndpoint,
        { method: 'POST', headers, body: new URLSearchParams(form).toString() },
        this.opts.policy,
      );
      status = res.status;
      try {
        const parsed: unknown = JSON.parse(res.body.toString('utf8'));
        json =
          parsed && typeof parsed === 'object' && !Array.isArray(parsed)
            ? (parsed as Record<string, unknown>)
            : undefined;
      } catch {
        json = undefined;
      }
    } catch (e) {
      // No answer (timeout, network, DNS): worth another try later.
      if (e instanceof OutboundError) return { kind: 'retryable', code: `upstream_${e.reason}` };
      return { kind: 'retryable', code: 'upstream_network' };
    }
    if (status === 429 || status >= 500) return { kind: 'retryable', code: `upstream_http_${status}` };
    if (status === 200 && json && typeof json.access_token === 'string' && json.access_token) {
      return {
        kind: 'ok',
        accessToken: json.access_token,
        refreshToken: typeof json.refresh_token === 'string' && json.refresh_token ? json.refresh_token : undefined,
        idToken: typeof json.id_token === 'string' && json.id_token ? json.id_token : undefined,
        expiresIn: Number.isInteger(json.expires_in) ? (json.expires_in as number) : undefined,
      };
    }
    const error = typeof json?.error === 'string' ? json.error : undefined;
    // RFC 6749 §5.2: invalid_grant = the refresh token is invalid, expired, revoked or another client's.
    if (error === 'invalid_grant') return { kind: 'invalid_grant', code: 'invalid_grant' };
    return { kind: 'error', code: (error ? `upstream_${error}` : `upstream_http_${status}`).slice(0, 64) };
  }
}
