/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document): a client the
 * operator never registered names itself by the https URL of a JSON document describing it. The
 * document is fetched through the one SSRF-guarded outbound client, validated, cached in memory
 * (cache.ts), and turned into a client bound to one tenant per request:
 * - at /authorize, the tenant whose resource server the request's `resource` names;
 * - at /token, the tenant of the code or refresh token redeemed;
 * - after issuance (userinfo, introspection, revocation), the token's `tenant_id`, without a fetch.
 * docs/client-metadata-documents.md has the whole story and the decisions.
 */
import { decodeJwt } from 'jose';
import type { Logger } from 'pino';
import type { Database } from '../../db/index.js';
import { InvalidClient } from '../../errors.js';
import { OutboundError, outboundRequest, type OutboundPolicy } from '../../net/outbound.js';
import {
  ClientMetadataLookups,
  Lookups,
  policyVersionsOf,
  TenantRepository,
  type ResolvedClient,
} from '../../repositories/index.js';
import { tokenHash } from '../auth/pkce.js';
import type { DirectoryService } from '../directory.js';
import { DocumentCache, lifetimeOf, type CachedDocument } from './cache.js';
import {
  clientFromDocument,
  DocumentError,
  documentUrlRefusal,
  isDocumentClientId,
  MAX_DOCUMENT_BYTES,
  validateDocument,
  type ClientDocument,
} from './document.js';
import { ClientMetadataPolicyService, policyOf, policyRefusal, POLICY_SECTION } from './policy.js';

export { isDocumentClientId } from './document.js';

/** How long the discovery document's `client_id_metadata_document_supported` answer is kept, ms. */
const SUPPORTED_MEMO_MS = 30_000;

/** What the client may read of an outbound failure: its kind, never an address or a body. */
const FAILURES: Record<OutboundError['reason'], string> = {
  url: 'its URL is not acceptable',
  blocked_address: 'its host resolves to a private or reserved address',
  dns: 'its host name could not be resolved',
  timeout: 'the server did not answer in time',
  status: 'the server did not answer 200 (redirects are not followed)',
  content_type: 'the answer is not application/json',
  too_large: `the document is larger than ${MAX_DOCUMENT_BYTES} bytes`,
  json: 'the document is not a JSON object',
  network: 'the connection failed',
};

export class ClientMetadataService {
  readonly policy: ClientMetadataPolicyService;
  private readonly cache = new DocumentCache();
  private supportedMemo: { at: number; value: Promise<boolean> } | undefined;

  constructor(
    private readonly ds: Database,
    private readonly o: { directory: DirectoryService; outbound: OutboundPolicy; logger?: Logger },
  ) {
    this.policy = new ClientMetadataPolicyService(ds, () => (this.supportedMemo = undefined));
  }

  /**
   * The client `url` names, for `tenantId`, or InvalidClient with the reason: the URL, the
   * tenant's policy, the fetch or the document. `fetch: false` never goes to the network: a
   * document not cached gives a stand-in (name = host, no redirect URI), enough for the checks
   * made after issuance (docs/client-metadata-documents.md, "After issuance").
   */
  async resolve(url: string, tenantId: string, opts: { fetch: boolean } = { fetch: true }): Promise<ResolvedClient> {
    const refusal = documentUrlRefusal(url);
    if (refusal) throw new InvalidClient(refusal);
    const tenant = await new TenantRepository(this.ds).get(tenantId);
    if (!tenant) throw new InvalidClient('Unknown client.');
    const settings = (tenant.settings ?? {}) as Record<string, unknown>;
    const refused = policyRefusal(policyOf(settings[POLICY_SECTION]), url);
    if (refused) throw new InvalidClient(refused);
    const entry = opts.fetch ? await this.cache.get(url, () => this.load(url)) : this.cache.peek(url);
    const doc = entry?.doc ?? standIn(url);
    const client = clientFromDocument(doc, tenantId, entry?.fetchedAt ?? 0);
    // RFC 8707: a document client may ask for the tenant's registered resource servers only.
    client.audiences = await new ClientMetadataLookups(this.ds).resourceIdentifiers(tenantId);
    return {
      client,
      tenantState: tenant.lifecycle_state,
      allowSignup: settings.allowSignup === true,
      policyVersions: policyVersionsOf(settings),
      tenantName: tenant.name,
      brandingSection: settings.branding,
    };
  }

  /**
   * directory.resolveClient for any client_id: a registered one as before; a document URL for
   * the tenant a token or saved request names (`tenantId`), from the cache (fetched only with
   * `fetch`, never on the hot paths after issuance); null when it is not (or no longer)
   * acceptable there.
   */
  async resolveClient(
    clientId: string,
    tenantId?: string,
    opts: { fetch: boolean } = { fetch: false },
  ): Promise<ResolvedClient | null> {
    if (!isDocumentClientId(clientId)) return this.o.directory.resolveClient(clientId);
    if (!tenantId) return null;
    try {
      return await this.resolve(clientId, tenantId, opts);
    } catch (e) {
      if (e instanceof InvalidClient) return null;
      throw e;
    }
  }

  /**
   * The tenant an authorization request for a document client belongs to: the one whose
   * registered resource server every `resource` names. A string is the refusal (invalid_target).
   */
  async tenantForResources(resources: string[]): Promise<{ tenantId: string } | string> {
    if (resources.length === 0)
      return (
        'A client identified by a metadata document must name the resource it wants a token for ' +
        '(resource, RFC 8707).'
      );
    const lookups = new ClientMetadataLookups(this.ds);
    let common: string[] | undefined;
    for (const r of resources) {
      const serving = await lookups.tenantsServing(r);
      common = common ? common.filter((t) => serving.includes(t)) : serving;
    }
    if (!common?.length) return 'The resource is not a registered resource server of this service.';
    if (common.length > 1) return 'The resource is registered by several tenants; it cannot name one.';
    return { tenantId: common[0] };
  }

  /** The tenant of the code or refresh token a token request redeems; undefined for other grants. */
  async tenantOfTokenRequest(form: Record<string, unknown>): Promise<string | undefined> {
    const lookups = new Lookups(this.ds);
    if (form.grant_type === 'authorization_code' && typeof form.code === 'string')
      return (await lookups.authCodeByHash(tokenHash(form.code)))?.tenant_id;
    if (form.grant_type === 'refresh_token' && typeof form.refresh_token === 'string')
      return (await lookups.refreshTokenByHash(tokenHash(form.refresh_token)))?.tenant_id;
    // Revocation (RFC 7009): a refresh token, or an access token's tenant_id (unverified here:
    // it only chooses the tenant; the revocation verifies the token and its client).
    if (form.grant_type === undefined && typeof form.token === 'string') {
      const refresh = await lookups.refreshTokenByHash(tokenHash(form.token));
      if (refresh) return refresh.tenant_id;
      try {
        const t = decodeJwt(form.token).tenant_id;
        return typeof t === 'string' ? t : undefined;
      } catch {
        return undefined;
      }
    }
    return undefined;
  }

  /**
   * Whether any tenant accepts documents: the discovery document's
   * `client_id_metadata_document_supported` (one issuer for every tenant). Memoised for 30 s per
   * daemon: discovery is read often, a policy change reaches other daemons within that.
   */
  supported(): Promise<boolean> {
    const now = Date.now();
    if (!this.supportedMemo || now - this.supportedMemo.at > SUPPORTED_MEMO_MS) {
      const value = new ClientMetadataLookups(this.ds)
        .settingsSections(POLICY_SECTION)
        .then((sections) => sections.some((s) => policyOf(s).enabled));
      this.supportedMemo = { at: now, value };
      value.catch(() => (this.supportedMemo = undefined));
    }
    return this.supportedMemo.value;
  }

  /** One fetch and validation; throws InvalidClient (nothing is cached then). */
  private async load(url: string): Promise<CachedDocument> {
    const fail = (why: string) => new InvalidClient(`The client metadata document at ${url} is not usable: ${why}.`);
    let res;
    try {
      res = await outboundRequest(
        url,
        { headers: { accept: 'application/json' } },
        { ...this.o.outbound, maxBytes: MAX_DOCUMENT_BYTES },
      );
    } catch (e) {
      if (!(e instanceof OutboundError)) throw e;
      this.o.logger?.info({ url, reason: e.reason, detail: e.message }, 'client metadata document fetch failed');
      throw fail(FAILURES[e.reason]);
    }
    if (res.status !== 200) throw fail(FAILURES.status);
    const type = String(res.headers['content-type'] ?? '')
      .split(';')[0]
      .trim()
      .toLowerCase();
    if (type !== 'application/json') throw fail(FAILURES.content_type);
    let body: unknown;
    try {
      body = JSON.parse(res.body.toString('utf8'));
    } catch {
      throw fail(FAILURES.json);
    }
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw fail(FAILURES.json);
    let doc: ClientDocument;
    try {
      doc = validateDocument(url, body as Record<string, unknown>);
    } catch (e) {
      if (e instanceof DocumentError) throw fail(e.message.replace(/\.$/, ''));
      throw e;
    }
    const now = Date.now();
    return { doc, fetchedAt: now, expiresAt: now + lifetimeOf(res.headers, now) };
  }
}

/** A document client known only by its URL (not cached here): enough to check a token's client. */
function standIn(url: string): ClientDocument {
  return {
    client_id: url,
    client_name: null,
    redirect_uris: [],
    grant_types: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_method: 'none',
    jwks: null,
    jwks_uri: null,
    scope: null,
    logo_uri: null,
    client_uri: null,
    policy_uri: null,
    tos_uri: null,
  };
}
