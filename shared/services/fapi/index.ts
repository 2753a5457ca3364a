/**
 * The FAPI 2.0 profile switch (docs/fapi.md): a tenant's `fapi` settings section (off,
 * fapi2-security, fapi2-message-signing), overridden by a client's own `fapi_profile`. The
 * enforcement points (client authentication, /par, /authorize, /token) each make one call here;
 * the refusals themselves are checks.ts.
 */
import type { Client, TokenEndpointAuthMethod } from '../../db/entities.js';
import type { Database } from '../../db/index.js';
import { TenantRepository } from '../../repositories/index.js';
import { FAPI_PROFILES, FapiPolicyInput, type FapiProfile } from '../../schemas/fapi.js';
import { parseInput } from '../../schemas/validate.js';
import type { Actor } from '../audit.js';
import type { AuthParams } from '../auth/oauth.js';
import { PolicySection, sectionEtag } from '../tenant-settings.js';
import { checkClientAuthentication, checkPushedRequest, checkTokenRequest } from './checks.js';

export { FAPI_ALGORITHMS } from './checks.js';

export interface FapiPolicyView {
  tenantId: string;
  policy: FapiPolicyInput;
}

/** The stored section; a malformed or absent one reads as off. */
export function fapiPolicyOf(section: unknown): FapiPolicyInput {
  const p = (section as { profile?: unknown } | null | undefined)?.profile;
  return { profile: FAPI_PROFILES.includes(p as FapiProfile) ? (p as FapiProfile) : 'off' };
}

const viewOf = (tenantId: string, policy: FapiPolicyInput) => ({
  view: { tenantId, policy },
  etag: sectionEtag(policy),
});

/** As the DPoP policy's: a change made at another daemon applies here within 5 s (here at once). */
const POLICY_CACHE_MS = 5_000;

export class FapiService {
  readonly input = FapiPolicyInput;
  private readonly cache = new Map<string, { at: number; profile: FapiProfile }>();

  private readonly section: PolicySection<FapiPolicyInput>;

  constructor(private readonly ds: Database) {
    this.section = new PolicySection(ds, {
      section: 'fapi',
      action: 'tenant.fapi.update',
      what: 'FAPI profile',
      of: fapiPolicyOf,
    });
  }

  /** The profile that applies to a client: its own, else its tenant's (cached a few seconds). */
  async profileOf(client: Client): Promise<FapiProfile> {
    if (client.fapi_profile) return client.fapi_profile;
    const hit = this.cache.get(client.tenant_id);
    if (hit && Date.now() - hit.at < POLICY_CACHE_MS) return hit.profile;
    const settings = await new TenantRepository(this.ds).settings(client.tenant_id);
    const { profile } = fapiPolicyOf(settings?.fapi);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(client.tenant_id, { at: Date.now(), profile });
    return profile;
  }

  /** Whether a plain /authorize (no pushed request) is refused for this client (§5.3.2.2: PAR only). */
  async requiresPar(client: Client): Promise<boolean> {
    return (await this.profileOf(client)) !== 'off';
  }

  /** After the client authenticated at /par, /token, /revoke or /introspect (checks.ts). */
  async checkClientAuthentication(client: Client, method: TokenEndpointAuthMethod, assertion?: string): Promise<void> {
    checkClientAuthentication(await this.profileOf(client), client, method, assertion);
  }

  /** A pushed request, validated, before it is stored (checks.ts). */
  async checkPushedRequest(client: Client, request: string | undefined, p: AuthParams): Promise<void> {
    checkPushedRequest(await this.profileOf(client), request, p);
  }

  /** A token request's DPoP header, before the proof itself is checked (checks.ts). */
  async checkTokenRequest(client: Client, proof: string | string[] | undefined): Promise<void> {
    checkTokenRequest(await this.profileOf(client), proof);
  }

  async view(tenantId: string): Promise<{ view: FapiPolicyView; etag: string }> {
    return viewOf(tenantId, await this.section.read(tenantId));
  }

  /** Replaces the tenant's profile (PUT), audited as `tenant.fapi.update`; If-Match as the other sections. */
  async update(
    tenantId: string,
    input: unknown,
    actor: Actor,
    opts: { ifMatch?: string; where?: string } = {},
  ): Promise<{ view: FapiPolicyView; etag: string }> {
    const next = parseInput(FapiPolicyInput, input, opts.where ?? '');
    const after = await this.section.replace(tenantId, next, actor, opts.ifMatch);
    this.cache.delete(tenantId);
    return viewOf(tenantId, after);
  }
}
