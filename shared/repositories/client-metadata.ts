/**
 * The lookups behind client ID metadata documents (shared/services/client-metadata/): which
 * tenant a request naming a resource belongs to, what a tenant's resource servers are, and
 * whether any tenant accepts documents at all. Like Lookups, they cross tenants because they run
 * before a request's tenant is known; each answers tenant ids, and whatever follows goes through
 * that tenant's scope.
 */
import type { Db } from '../db/index.js';
import { all, json } from '../db/sql.js';

const parseList = (v: unknown): string[] => {
  try {
    const list = JSON.parse(String(v)) as unknown;
    return Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
};

export class ClientMetadataLookups {
  constructor(private readonly db: Db) {}

  /**
   * The active tenants with an active client registering `resource` among its
   * resource_identifiers (RFC 8707 §2), compared exactly. The JSON list is not indexed: the LIKE
   * narrows, the parse decides (as ScopedPermissions.resourceRegistered).
   */
  async tenantsServing(resource: string): Promise<string[]> {
    const needle = JSON.stringify(resource).replace(/[!%_]/g, (c) => `!${c}`);
    const rows = await all<Record<string, unknown>>(
      this.db,
      `SELECT c.tenant_id, c.resource_identifiers FROM clients c JOIN tenants t ON t.id = c.tenant_id
        WHERE c.status = 'active' AND t.lifecycle_state = 'active' AND c.resource_identifiers IS NOT NULL
          AND c.resource_identifiers LIKE ? ESCAPE '!'`,
      [`%${needle}%`],
    );
    return [
      ...new Set(
        rows.filter((r) => parseList(r.resource_identifiers).includes(resource)).map((r) => String(r.tenant_id)),
      ),
    ];
  }

  /** Every resource identifier the tenant's active clients register: the audiences a document client may ask for. */
  async resourceIdentifiers(tenantId: string): Promise<string[]> {
    const rows = await all<Record<string, unknown>>(
      this.db,
      `SELECT resource_identifiers FROM clients
        WHERE tenant_id = ? AND status = 'active' AND resource_identifiers IS NOT NULL`,
      [tenantId],
    );
    return [...new Set(rows.flatMap((r) => parseList(r.resource_identifiers)))];
  }

  /**
   * The `section` of the settings of every active tenant whose settings mention it (the LIKE
   * narrows; the caller parses): whether any tenant accepts documents, for the discovery document.
   */
  async settingsSections(section: string): Promise<unknown[]> {
    const rows = await all<{ settings: unknown }>(
      this.db,
      `SELECT settings FROM tenants WHERE lifecycle_state = 'active' AND settings LIKE ?`,
      [`%"${section}"%`],
    );
    return rows.map((r) => (json<Record<string, unknown> | null>(r.settings) ?? {})[section]);
  }
}
