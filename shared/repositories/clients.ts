/**
 * A tenant's OAuth clients and their secrets (`client_secrets`, keyed hashes only). The
 * cross-tenant lookups by client_id and by CORS origin are in lookups.ts.
 */
import { ClientEntity, type Client } from '../db/entities.js';
import { all, exec } from '../db/sql.js';
import { clampLimit, manager, type Page, type ScopeRef } from './common.js';

export class ScopedClients {
  constructor(private readonly s: ScopeRef) {}
  private get repo() {
    return manager(this.s.db).getRepository(ClientEntity);
  }
  get(id: string): Promise<Client | null> {
    return this.repo.findOneBy({ tenant_id: this.s.tenantId, id });
  }
  getByClientId(clientId: string): Promise<Client | null> {
    return this.repo.findOneBy({ tenant_id: this.s.tenantId, client_id: clientId });
  }
  list(page: Page = {}): Promise<Client[]> {
    return this.repo.find({
      where: { tenant_id: this.s.tenantId },
      order: { created_at: 'ASC', id: 'ASC' },
      take: clampLimit(page.limit),
      skip: page.offset ?? 0,
    });
  }
  /** Writes the agent-writable metadata (docs/agents.md); 1 when the row was this tenant's. */
  updateMetadata(
    id: string,
    m: { name: string; description: string | null; logo_uri: string | null; client_uri: string | null },
    now: number,
  ): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE clients SET name = ?, description = ?, logo_uri = ?, client_uri = ?, updated_at = ?
        WHERE tenant_id = ? AND id = ?`,
      [m.name, m.description, m.logo_uri, m.client_uri, now, this.s.tenantId, id],
    );
  }
  async insert(c: Omit<Client, 'tenant_id'>): Promise<Client> {
    const { id, ...rest } = c;
    const row = { id, tenant_id: this.s.tenantId, ...rest };
    await this.repo.insert(row);
    // One row per allowed origin, beside the JSON list, so a CORS preflight can find an origin by
    // index (Lookups.originRegistered). Both are written here, in the caller's transaction.
    for (const origin of row.allowed_origins)
      await exec(this.s.db, 'INSERT INTO client_origins (tenant_id, client_id, origin) VALUES (?, ?, ?)', [
        this.s.tenantId,
        row.client_id,
        origin,
      ]);
    return row;
  }

  /**
   * Writes the editable registration (docs/directory.md, "Clients") and the CORS origin rows
   * beside it; 1 when the row was this tenant's. `updated_at` is the caller's (it must change).
   */
  async update(id: string, clientId: string, fields: Partial<Client>): Promise<number> {
    const { affected } = await this.repo.update({ tenant_id: this.s.tenantId, id }, fields);
    if (fields.allowed_origins) {
      await exec(this.s.db, 'DELETE FROM client_origins WHERE tenant_id = ? AND client_id = ?', [
        this.s.tenantId,
        clientId,
      ]);
      for (const origin of fields.allowed_origins)
        await exec(this.s.db, 'INSERT INTO client_origins (tenant_id, client_id, origin) VALUES (?, ?, ?)', [
          this.s.tenantId,
          clientId,
          origin,
        ]);
    }
    return affected ?? 0;
  }

  /**
   * Raises updated_at past both its old value and `now` (two changes in one millisecond still
   * differ): what introspection's cached callers compare (Lookups.clientStamp).
   */
  touch(clientId: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE clients SET updated_at = CASE WHEN updated_at >= ? THEN updated_at + 1 ELSE ? END
        WHERE tenant_id = ? AND client_id = ?`,
      [now, now, this.s.tenantId, clientId],
    );
  }

  /** Disable or enable; a disable also sets the access-token watermark (seconds). */
  setStatus(clientId: string, status: Client['status'], tokensRevokedBefore: number | null): Promise<number> {
    return tokensRevokedBefore === null
      ? exec(this.s.db, 'UPDATE clients SET status = ? WHERE tenant_id = ? AND client_id = ?', [
          status,
          this.s.tenantId,
          clientId,
        ])
      : exec(
          this.s.db,
          'UPDATE clients SET status = ?, tokens_revoked_before = ? WHERE tenant_id = ? AND client_id = ?',
          [status, tokensRevokedBefore, this.s.tenantId, clientId],
        );
  }

  /**
   * Ends what the client holds for users: its refresh token families are revoked (every refresh
   * token and, through introspection's family check, every access token of them) and its
   * unredeemed authorization codes deleted. Returns the families revoked.
   */
  async revokeGrants(clientId: string, now: number): Promise<number> {
    const t = this.s.tenantId;
    const families = await exec(
      this.s.db,
      `UPDATE token_families SET revoked_at = ?, revoked_reason = 'client_disabled'
        WHERE tenant_id = ? AND client_id = ? AND revoked_at IS NULL`,
      [now, t, clientId],
    );
    await exec(this.s.db, 'DELETE FROM auth_codes WHERE tenant_id = ? AND client_id = ?', [t, clientId]);
    return families;
  }

  /**
   * Deletes the client and what is its alone: secrets, authorization codes, refresh tokens and
   * their families, consents, CORS origin rows, its dynamic registration record. 1 when the row was this tenant's.
   */
  async remove(id: string, clientId: string): Promise<number> {
    const t = this.s.tenantId;
    const by = [t, clientId];
    await exec(this.s.db, 'DELETE FROM client_secrets WHERE tenant_id = ? AND client_id = ?', by);
    await exec(this.s.db, 'DELETE FROM auth_codes WHERE tenant_id = ? AND client_id = ?', by);
    await exec(
      this.s.db,
      `DELETE FROM refresh_tokens WHERE tenant_id = ? AND family_id IN
         (SELECT id FROM token_families WHERE tenant_id = ? AND client_id = ?)`,
      [t, t, clientId],
    );
    await exec(this.s.db, 'DELETE FROM token_families WHERE tenant_id = ? AND client_id = ?', by);
    await exec(this.s.db, 'DELETE FROM consents WHERE tenant_id = ? AND client_id = ?', by);
    await exec(this.s.db, 'DELETE FROM client_origins WHERE tenant_id = ? AND client_id = ?', by);
    // A dynamic registration's record (RFC 7592 access token hash) goes with its client.
    await exec(this.s.db, 'DELETE FROM client_registrations WHERE tenant_id = ? AND client_id = ?', by);
    return exec(this.s.db, 'DELETE FROM clients WHERE tenant_id = ? AND id = ?', [t, id]);
  }

  /**
   * Which of `resources` some active client of the tenant registers among its resource_identifiers
   * (RFC 8707 §2: the registered resource servers), compared exactly; order of `resources`
   * kept. The JSON lists are not indexed: one LIKE per value narrows the tenant's clients to
   * those whose list contains its quoted text, the parse decides.
   */
  async registeredResources(resources: readonly string[]): Promise<string[]> {
    const wanted = [...new Set(resources)];
    if (!wanted.length) return [];
    const like = wanted.map(() => "resource_identifiers LIKE ? ESCAPE '!'").join(' OR ');
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      `SELECT resource_identifiers FROM clients
        WHERE tenant_id = ? AND status = 'active' AND resource_identifiers IS NOT NULL AND (${like})`,
      [this.s.tenantId, ...wanted.map((r) => `%${JSON.stringify(r).replace(/[!%_]/g, (c) => `!${c}`)}%`)],
    );
    const found = new Set<string>();
    for (const r of rows) {
      try {
        const list = JSON.parse(String(r.resource_identifiers)) as unknown;
        if (Array.isArray(list)) for (const v of list) if (typeof v === 'string') found.add(v);
      } catch {
        /* a malformed list registers nothing */
      }
    }
    return wanted.filter((r) => found.has(r));
  }

  /** The protected resource metadata document (RFC 9728) hosted for the client, as stored; null for none. */
  async resourceMetadata(clientId: string): Promise<string | null> {
    const rows = await all<Record<string, unknown>>(
      this.s.db,
      'SELECT resource_metadata FROM clients WHERE tenant_id = ? AND client_id = ?',
      [this.s.tenantId, clientId],
    );
    const v = rows[0]?.resource_metadata;
    return typeof v === 'string' ? v : null;
  }

  /**
   * Stores (or with null removes) the hosted document, raising updated_at as touch() does, and
   * with `strict` also turns strict introspection on; 1 when the row was this tenant's.
   */
  setResourceMetadata(clientId: string, document: string | null, now: number, strict = false): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE clients SET resource_metadata = ?,${strict ? ' strict_introspection = 1,' : ''}
          updated_at = CASE WHEN updated_at >= ? THEN updated_at + 1 ELSE ? END
        WHERE tenant_id = ? AND client_id = ?`,
      [document, now, now, this.s.tenantId, clientId],
    );
  }

  // ---- secrets (keyed hashes; the value is shown once, at creation, and never stored) ----

  async insertSecret(x: { id: string; clientId: string; hash: string; createdAt: number }): Promise<void> {
    await exec(
      this.s.db,
      `INSERT INTO client_secrets (id, tenant_id, client_id, secret_hash, created_at, expires_at, revoked_at)
       VALUES (?, ?, ?, ?, ?, NULL, NULL)`,
      [x.id, this.s.tenantId, x.clientId, x.hash, x.createdAt],
    );
  }

  /**
   * Gives every live secret of the client an expiry no later than `expiresAt` (one that already
   * expires sooner keeps its own): the overlap of a rotation. Returns how many.
   */
  expireLiveSecrets(clientId: string, expiresAt: number, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE client_secrets
          SET expires_at = CASE WHEN expires_at IS NOT NULL AND expires_at < ? THEN expires_at ELSE ? END
        WHERE tenant_id = ? AND client_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)`,
      [expiresAt, expiresAt, this.s.tenantId, clientId, now],
    );
  }

  /** The secrets that authenticate at `now` (neither revoked nor expired), oldest first. */
  liveSecrets(clientId: string, now: number): Promise<ClientSecretRow[]> {
    return all<Record<string, unknown>>(
      this.s.db,
      `SELECT id, secret_hash, created_at, expires_at FROM client_secrets
        WHERE tenant_id = ? AND client_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)
        ORDER BY created_at, id`,
      [this.s.tenantId, clientId, now],
    ).then((rows) =>
      rows.map((r) => ({
        id: String(r.id),
        secret_hash: String(r.secret_hash),
        created_at: Number(r.created_at),
        expires_at: r.expires_at === null || r.expires_at === undefined ? null : Number(r.expires_at),
      })),
    );
  }

  /** Revokes one live secret at once; 1 when it was this client's and live. */
  revokeSecret(clientId: string, secretId: string, now: number): Promise<number> {
    return exec(
      this.s.db,
      `UPDATE client_secrets SET revoked_at = ?
        WHERE tenant_id = ? AND client_id = ? AND id = ? AND revoked_at IS NULL
          AND (expires_at IS NULL OR expires_at > ?)`,
      [now, this.s.tenantId, clientId, secretId, now],
    );
  }
}

/** One secret of a client: its keyed hash, never the value. */
export interface ClientSecretRow {
  id: string;
  secret_hash: string;
  created_at: number;
  /** Epoch ms; null: no expiry. */
  expires_at: number | null;
}
