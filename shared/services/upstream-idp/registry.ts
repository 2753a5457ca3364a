/**
 * Registration of a tenant's upstream OpenID providers (docs/identity-providers.md): the admin
 * API and `iam idp add|list|disable|enable` call this service.
 *
 * At registration the issuer is checked (https, no credentials, query or fragment, a public
 * host; loopback only under IAM_OUTBOUND_ALLOW_LOOPBACK) and its discovery document fetched
 * through the SSRF-safe fetcher, so a typo or an unreachable provider is refused at once with a
 * clear 400 rather than at a user's first sign-in. The client secret is sealed (sealing.ts) and
 * never returned, listed or audited.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { newId } from '../../crypto.js';
import { isUniqueViolation, type Database } from '../../db/index.js';
import { ApiError, conflict, notFound } from '../../errors.js';
import { TenantRepository, TenantScope, type UpstreamIdpRow } from '../../repositories/index.js';
import { scopeToken } from '../../schemas/common.js';
import { parseInput } from '../../schemas/validate.js';
import { audit, type Actor } from '../audit.js';
import { issuerProblem } from '../token-exchange/settings.js';
import { UpstreamDiscoveryError, type UpstreamClients } from './client.js';
import type { UpstreamSealer } from './sealing.js';

/** The path of our redirect URI at every upstream provider (operators register `{issuer}` + this). */
export const UPSTREAM_CALLBACK_PATH = '/login/upstream/callback';
export const DEFAULT_UPSTREAM_SCOPES = ['openid', 'email', 'profile'];
const SLUG = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

export const issuerHash = (issuer: string): string => createHash('sha256').update(issuer).digest('base64url');

/** The registration body; built per daemon because issuer validation follows IAM_OUTBOUND_ALLOW_LOOPBACK. */
export function upstreamIdpInput(allowLoopback: boolean) {
  return z.strictObject({
    issuer: z
      .string({ error: 'must be a string' })
      .superRefine((v, ctx) => {
        const problem = issuerProblem(v, allowLoopback);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      // The issuer identifier is compared exactly (OIDC Discovery §4.3); a trailing slash is
      // part of it, so it is kept as given.
      .describe('The upstream OpenID Provider issuer identifier (https, no query or fragment).'),
    client_id: z.string().trim().min(1, 'must not be empty').max(255).describe('Our client_id at the upstream.'),
    client_secret: z
      .string()
      .min(1, 'must not be empty')
      .max(1024)
      .describe('Our client secret at the upstream; stored encrypted, never returned.'),
    scopes: z
      .array(scopeToken)
      .min(1)
      .max(20)
      .refine((s) => s.includes('openid'), 'must include openid')
      .optional()
      .describe(`Scopes asked of the upstream (default: ${DEFAULT_UPSTREAM_SCOPES.join(' ')}).`),
    display_name: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(100)
      .optional()
      .describe('The name on the login button ("Continue with <name>"); default the issuer host.'),
    slug: z
      .string()
      .regex(SLUG, 'must be 1 to 64 lower-case letters, digits or inner hyphens')
      .optional()
      .describe('A short name for the provider, unique in the tenant; default made from the display name.'),
    link_by_verified_email: z
      .boolean()
      .optional()
      .describe(
        'Link an upstream user to the local user with the same address when the upstream says it is verified ' +
          '(email_verified=true). Default false.',
      ),
  });
}
export type UpstreamIdpInput = z.input<ReturnType<typeof upstreamIdpInput>>;

export const UpstreamIdpStatusInput = z.strictObject({
  status: z.enum(['active', 'disabled'], { error: 'must be active or disabled' }),
});

/** What the API and CLI show of a provider: never the secret. */
export const UpstreamIdpView = z.object({
  id: z.string(),
  tenant_id: z.string(),
  slug: z.string(),
  display_name: z.string(),
  issuer: z.string(),
  client_id: z.string(),
  scopes: z.array(z.string()),
  link_by_verified_email: z.boolean(),
  status: z.enum(['active', 'disabled']),
  redirect_uri: z.string().describe('The redirect URI to register at the upstream for this client.'),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});
export type UpstreamIdpView = z.infer<typeof UpstreamIdpView>;

function slugFrom(name: string): string {
  const s = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return s || 'idp';
}

export class UpstreamIdpRegistry {
  readonly input: ReturnType<typeof upstreamIdpInput>;

  constructor(
    private readonly ds: Database,
    private readonly deps: { sealer: UpstreamSealer; clients: UpstreamClients; issuer: string; allowLoopback: boolean },
  ) {
    this.input = upstreamIdpInput(deps.allowLoopback);
  }

  get redirectUri(): string {
    return `${this.deps.issuer}${UPSTREAM_CALLBACK_PATH}`;
  }

  view(r: UpstreamIdpRow): UpstreamIdpView {
    return {
      id: r.id,
      tenant_id: r.tenant_id,
      slug: r.slug,
      display_name: r.display_name,
      issuer: r.issuer,
      client_id: r.client_id,
      scopes: r.scopes.split(' ').filter(Boolean),
      link_by_verified_email: r.link_by_verified_email,
      status: r.status,
      redirect_uri: this.redirectUri,
      created_at: r.created_at,
      updated_at: r.updated_at,
    };
  }

  private async requireTenant(tenantId: string): Promise<void> {
    if (!(await new TenantRepository(this.ds).get(tenantId))) throw notFound('Tenant');
  }

  /**
   * Validates, fetches discovery, seals the secret and stores the registration. Audited.
   * `where`: the prefix of field names in messages (`body` for the API, none for the CLI, which
   * names its flags instead).
   */
  async create(tenantId: string, raw: unknown, actor: Actor, where = 'body'): Promise<UpstreamIdpView> {
    const v = parseInput(this.input, raw, where);
    const at = (field: string) => (where ? `${where}.${field}: ` : '');
    await this.requireTenant(tenantId);
    const scope = new TenantScope(this.ds, tenantId);
    const hash = issuerHash(v.issuer);
    if (await scope.upstreamIdps.findByIssuerClient(hash, v.client_id))
      throw conflict(`${at('client_id')}this tenant already has a provider for ${v.issuer} with this client_id.`, {
        field: 'client_id',
      });
    try {
      await this.deps.clients.discover(v.issuer);
    } catch (e) {
      if (e instanceof UpstreamDiscoveryError)
        throw new ApiError(400, 'upstream_discovery_failed', `${at('issuer')}${e.message}`, { field: 'issuer' });
      throw e;
    }
    const displayName = v.display_name ?? new URL(v.issuer).host;
    const slug = v.slug ?? slugFrom(displayName);
    const id = newId('uip');
    const now = Date.now();
    const row = {
      id,
      slug,
      display_name: displayName,
      issuer: v.issuer,
      issuer_hash: hash,
      client_id: v.client_id,
      client_secret_sealed: this.deps.sealer.seal(
        v.client_secret,
        'upstream_identity_providers.client_secret_sealed',
        id,
      ),
      secret_key_id: this.deps.sealer.keyId,
      scopes: [...new Set(v.scopes ?? DEFAULT_UPSTREAM_SCOPES)].join(' '),
      link_by_verified_email: v.link_by_verified_email ?? false,
      status: 'active' as const,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.ds.transaction(async (tx) => {
        await new TenantScope(tx, tenantId).upstreamIdps.insert(row);
        const { client_secret_sealed: _s, secret_key_id: _k, issuer_hash: _h, ...shown } = row;
        await audit(tx, actor, {
          tenantId,
          action: 'upstream_idp.create',
          targetType: 'upstream_idp',
          targetId: id,
          summary: { after: shown },
        });
      });
    } catch (e) {
      if (isUniqueViolation(e)) {
        const bySlug = await scope.upstreamIdps.getBySlug(slug);
        if (bySlug)
          throw conflict(`${at('slug')}this tenant already has a provider named "${slug}"; choose another slug.`, {
            field: 'slug',
          });
        throw conflict(`${at('client_id')}this tenant already has a provider for ${v.issuer} with this client_id.`, {
          field: 'client_id',
        });
      }
      throw e;
    }
    return this.view({ ...row, tenant_id: tenantId });
  }

  async list(tenantId: string): Promise<UpstreamIdpView[]> {
    await this.requireTenant(tenantId);
    return (await new TenantScope(this.ds, tenantId).upstreamIdps.list()).map((r) => this.view(r));
  }

  /** A provider by id or slug. */
  async get(tenantId: string, idOrSlug: string): Promise<UpstreamIdpView> {
    return this.view(await this.row(tenantId, idOrSlug));
  }

  private async row(tenantId: string, idOrSlug: string): Promise<UpstreamIdpRow> {
    await this.requireTenant(tenantId);
    const scope = new TenantScope(this.ds, tenantId);
    const r = idOrSlug.startsWith('uip_')
      ? await scope.upstreamIdps.get(idOrSlug)
      : await scope.upstreamIdps.getBySlug(idOrSlug);
    if (!r) throw notFound('Identity provider');
    return r;
  }

  /**
   * Disables or enables a provider. A disabled provider is kept (its links and their users stay),
   * but its button leaves the login page and its callbacks are refused. Audited.
   */
  async setStatus(tenantId: string, idOrSlug: string, raw: unknown, actor: Actor): Promise<UpstreamIdpView> {
    const { status } = parseInput(UpstreamIdpStatusInput, raw);
    const r = await this.row(tenantId, idOrSlug);
    if (r.status === status) return this.view(r);
    const now = Date.now();
    await this.ds.transaction(async (tx) => {
      await new TenantScope(tx, tenantId).upstreamIdps.setStatus(r.id, status, now);
      await audit(tx, actor, {
        tenantId,
        action: status === 'disabled' ? 'upstream_idp.disable' : 'upstream_idp.enable',
        targetType: 'upstream_idp',
        targetId: r.id,
        summary: { before: { status: r.status }, after: { status } },
      });
    });
    this.deps.clients.invalidate(r.id);
    return this.view({ ...r, status, updated_at: now });
  }
}
