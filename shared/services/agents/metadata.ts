/**
 * Agent-safe client metadata (docs/agents.md, "Agent-write client metadata"): the one client
 * update an agent-facing tool may make. An allow-list of four display fields; everything that
 * decides what a client may do (redirect URIs, origins, grants, authentication, credentials,
 * trust, scopes, protocol security) is refused by name, so an agent can never widen a client
 * by smuggling a field into a "cosmetic" update.
 */
import type { Client } from '../../db/entities.js';
import type { Database } from '../../db/index.js';
import { ApiError, badRequest, notFound } from '../../errors.js';
import { TenantScope } from '../../repositories/index.js';
import { audit, type Actor } from '../audit.js';

export const AGENT_WRITABLE_FIELDS = ['client_name', 'description', 'logo_uri', 'client_uri'] as const;

/**
 * Fields named in the refusal as security-relevant (the interface excludes redirect URIs,
 * origins, grants, token authentication, credentials, trust, scopes and protocol-security
 * settings). Any other unknown key is refused too, with the same code: the surface is closed.
 */
export const AGENT_EXCLUDED_FIELDS = new Set([
  'redirect_uris',
  'redirect_uri',
  'post_logout_redirect_uris',
  'allowed_origins',
  'origins',
  'web_origins',
  'grant_types',
  'response_types',
  'token_endpoint_auth_method',
  'token_endpoint_auth_signing_alg',
  'client_secret',
  'client_secret_expires_at',
  'credentials',
  'jwks',
  'jwks_uri',
  'client_type',
  'public',
  'first_party',
  'trusted',
  'trust',
  'trust_level',
  'strict_introspection',
  'scopes',
  'scope',
  'audiences',
  'resource_identifiers',
  'require_pkce',
  'pkce_required',
  'code_challenge_method',
  'require_pushed_authorization_requests',
  'require_signed_request_object',
  'dpop_bound_access_tokens',
  'require_dpop',
  'tls_client_certificate_bound_access_tokens',
  'id_token_signed_response_alg',
  'status',
  'client_id',
  'id',
  'tenant_id',
]);

export const METADATA_LIMITS = { clientName: 200, description: 1000, uri: 2048 } as const;

/** The client as the agent-write endpoint shows it: public metadata only. */
export interface AgentClientMetadata {
  id: string;
  client_id: string;
  client_name: string;
  description: string | null;
  logo_uri: string | null;
  client_uri: string | null;
  updated_at: number;
}

const view = (c: Client): AgentClientMetadata => ({
  id: c.id,
  client_id: c.client_id,
  client_name: c.name,
  description: c.description ?? null,
  logo_uri: c.logo_uri ?? null,
  client_uri: c.client_uri ?? null,
  updated_at: c.updated_at,
});

const field = (name: string, message: string) =>
  badRequest(`body.${name}: ${message}`, [{ field: `body.${name}`, message }]);

/**
 * Why `value` is not an acceptable logo_uri / client_uri, or undefined: an absolute https URL
 * (RFC 3986 §3) of at most 2048 characters, without userinfo (§3.2.1: credentials in a URL
 * leak) or fragment. `javascript:` and `data:` are named because they are what an attacker tries.
 */
export function uriProblem(value: string): string | undefined {
  if (value.length > METADATA_LIMITS.uri) return `must be at most ${METADATA_LIMITS.uri} characters`;
  if (/^\s*(javascript|data|vbscript):/i.test(value)) return 'must not be a javascript: or data: URI';
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\s\x00-\x1f]/.test(value)) return 'must not contain whitespace or control characters';
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return 'must be an absolute https URL';
  }
  if (u.protocol !== 'https:') return 'must be an https URL';
  if (u.username || u.password || /^https:\/\/[^/?#]*@/i.test(value)) return 'must not contain userinfo';
  if (u.hash || value.includes('#')) return 'must not contain a fragment';
  return undefined;
}

export const CLIENT_METADATA_ID = /^[A-Za-z0-9._~-]{1,128}$/;

export class AgentClientMetadataService {
  constructor(private readonly ds: Database) {}

  /**
   * Validates the body (allow-list), finds the client by its client_id or its id in the
   * tenant, and stores the merged metadata with an audit event carrying before and after. The
   * same body again changes nothing and records nothing (`changed: false`): an idempotent PUT.
   */
  async put(
    tenantId: string,
    id: string,
    raw: unknown,
    actor: Actor,
  ): Promise<{ client: AgentClientMetadata; changed: boolean }> {
    if (!CLIENT_METADATA_ID.test(id))
      throw badRequest('id: must be 1 to 128 characters of A-Z a-z 0-9 . _ ~ -', [
        { field: 'id', message: 'must be 1 to 128 characters of A-Z a-z 0-9 . _ ~ -' },
      ]);
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw field('(body)', 'must be a JSON object');
    const body = raw as Record<string, unknown>;
    const keys = Object.keys(body);
    for (const k of keys) {
      if ((AGENT_WRITABLE_FIELDS as readonly string[]).includes(k)) continue;
      const why = AGENT_EXCLUDED_FIELDS.has(k)
        ? 'is not agent-writable (security-relevant client settings change only through the client administration API)'
        : `is not agent-writable (only ${AGENT_WRITABLE_FIELDS.join(', ')} are)`;
      throw new ApiError(400, 'field_not_agent_writable', `body.${k}: ${why}`, {
        details: [{ field: `body.${k}`, message: why }],
      });
    }
    if (keys.length === 0) throw field('(body)', `must name at least one of ${AGENT_WRITABLE_FIELDS.join(', ')}`);
    const next: Partial<Record<(typeof AGENT_WRITABLE_FIELDS)[number], string | null>> = {};
    if ('client_name' in body) {
      const v = body.client_name;
      if (typeof v !== 'string') throw field('client_name', 'must be a string');
      if (v.length < 1 || v.length > METADATA_LIMITS.clientName || !v.trim())
        throw field('client_name', `must be 1 to ${METADATA_LIMITS.clientName} characters, not blank`);
      next.client_name = v;
    }
    if ('description' in body) {
      const v = body.description;
      if (v !== null && typeof v !== 'string') throw field('description', 'must be a string or null');
      if (typeof v === 'string' && v.length > METADATA_LIMITS.description)
        throw field('description', `must be at most ${METADATA_LIMITS.description} characters`);
      next.description = v === '' ? null : v;
    }
    for (const k of ['logo_uri', 'client_uri'] as const) {
      if (!(k in body)) continue;
      const v = body[k];
      if (v !== null && typeof v !== 'string') throw field(k, 'must be a string or null');
      if (typeof v === 'string') {
        const problem = uriProblem(v);
        if (problem) throw field(k, problem);
      }
      next[k] = v;
    }
    return this.ds.transaction(async (tx) => {
      const scope = new TenantScope(tx, tenantId);
      const c = (await scope.clients.getByClientId(id)) ?? (await scope.clients.get(id));
      if (!c) throw notFound(`Client ${id}`);
      const before = view(c);
      const after = {
        name: next.client_name ?? before.client_name,
        description: 'description' in next ? (next.description ?? null) : before.description,
        logo_uri: 'logo_uri' in next ? (next.logo_uri ?? null) : before.logo_uri,
        client_uri: 'client_uri' in next ? (next.client_uri ?? null) : before.client_uri,
      };
      if (
        after.name === before.client_name &&
        after.description === before.description &&
        after.logo_uri === before.logo_uri &&
        after.client_uri === before.client_uri
      )
        return { client: before, changed: false };
      const now = Date.now();
      await scope.clients.updateMetadata(c.id, after, now);
      const updated: AgentClientMetadata = { ...before, client_name: after.name, ...after, updated_at: now };
      delete (updated as Partial<typeof after>).name;
      const pick = (m: AgentClientMetadata) => ({
        client_name: m.client_name,
        description: m.description,
        logo_uri: m.logo_uri,
        client_uri: m.client_uri,
      });
      await audit(tx, actor, {
        tenantId,
        action: 'client.agent_metadata.update',
        targetType: 'client',
        targetId: c.client_id,
        summary: { before: pick(before), after: pick(updated), fields: keys },
      });
      return { client: updated, changed: true };
    });
  }
}
