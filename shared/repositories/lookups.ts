import { boolInt, jsonText, type Client } from '../db/entities.js';
import type { Db } from '../db/index.js';
import { one } from '../db/sql.js';

/** What a client_id resolves to: the client, and the state and sign-up setting of its tenant. */
export interface ResolvedClient {
  client: Client;
  tenantState: string;
  allowSignup: boolean;
}

/**
 * Lookups that cross tenants, each by a value presented before anyone knows its tenant: a
 * globally unique client_id, or (added per area) the hash of an unguessable cookie, code or
 * token. Each returns the tenant id; everything after it goes through that tenant's scope.
 * Nothing else in the data layer reads tenant-owned rows without a TenantScope.
 */
export class Lookups {
  constructor(private readonly db: Db) {}

  /**
   * OAuth clients present a globally unique client_id before their tenant is known. One
   * indexed join, no query builder: this runs on nearly every OAuth request.
   */
  async clientByClientId(clientId: string): Promise<ResolvedClient | null> {
    const r = await one<Record<string, unknown>>(
      this.db,
      `SELECT c.id, c.tenant_id, c.client_id, c.name, c.client_type, c.secret_hash, c.redirect_uris, c.grant_types,
              c.scopes, c.audiences, c.first_party, c.status, c.resource_identifiers, c.strict_introspection,
              c.created_at, c.updated_at, t.lifecycle_state, t.settings
         FROM clients c JOIN tenants t ON t.id = c.tenant_id WHERE c.client_id = ?`,
      [clientId],
    );
    if (!r) return null;
    const client: Client = {
      id: String(r.id),
      tenant_id: String(r.tenant_id),
      client_id: String(r.client_id),
      name: String(r.name),
      client_type: r.client_type as Client['client_type'],
      secret_hash: (r.secret_hash as string | null) ?? null,
      redirect_uris: jsonText.from(r.redirect_uris) as string[],
      grant_types: jsonText.from(r.grant_types) as string[],
      scopes: jsonText.from(r.scopes) as string[],
      audiences: jsonText.from(r.audiences) as string[],
      first_party: boolInt.from(r.first_party) as boolean,
      status: r.status as Client['status'],
      resource_identifiers:
        typeof r.resource_identifiers === 'string' ? (JSON.parse(r.resource_identifiers) as string[]) : [],
      strict_introspection: boolInt.from(r.strict_introspection) as boolean,
      created_at: Number(r.created_at),
      updated_at: Number(r.updated_at),
    };
    const settings = (jsonText.from(r.settings) ?? {}) as { allowSignup?: unknown };
    return { client, tenantState: String(r.lifecycle_state), allowSignup: settings.allowSignup === true };
  }
}
