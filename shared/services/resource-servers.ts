/**
 * Resource servers (docs/mcp.md): the RFC 8707 rule every token request applies to `resource`
 * (resource-indicators.ts), and the protected resource metadata documents (RFC 9728) a
 * registered resource server has the service host for it, at `{issuer}/resource-metadata/{client_id}`.
 *
 * Hosting a document makes the client a strict introspector (docs/introspection.md): the first
 * store turns strict introspection on, in the same transaction, so a token addressed to another
 * resource is `active: false` to it (RFC 9728 §7.4 wants audience-restricted tokens; the MCP
 * authorization specification forbids accepting tokens issued for another resource). The
 * operator may turn it off again with the client's PATCH; replacing the document later leaves
 * the setting alone, and existing resource servers without a document keep theirs.
 */
import { createHash } from 'node:crypto';
import type { Client } from '../db/entities.js';
import type { Database, Tx } from '../db/index.js';
import { ApiError, badRequest, notFound } from '../errors.js';
import { TenantScope } from '../repositories/index.js';
import { MAX_DOCUMENT_BYTES, ResourceMetadataInput, type ResourceMetadataView } from '../schemas/resource-metadata.js';
import { parseInput } from '../schemas/validate.js';
import { ifMatchSatisfied } from './agents/terms.js';
import { audit, type Actor } from './audit.js';
import type { DirectoryService } from './directory.js';
import { resourceRefusal } from './resource-indicators.js';

/** The path the documents are served under, below the issuer. */
export const RESOURCE_METADATA_PATH = '/resource-metadata';

/** A strong entity tag (RFC 9110 §8.8.3) of the stored document. */
const etagOf = (text: string) => `"${createHash('sha256').update(text).digest('base64url').slice(0, 32)}"`;

export class ResourceServerService {
  constructor(
    private readonly ds: Database,
    private readonly issuer: string,
    private readonly directory: DirectoryService,
  ) {}

  /** Why `resources` cannot be served to `client` (RFC 8707 §2), or undefined: the one rule. */
  refusal(client: Client, resources: readonly string[]): Promise<string | undefined> {
    return resourceRefusal(this.ds, client, resources, this.issuer);
  }

  /** The public URL of a client's hosted document. */
  urlOf(clientId: string): string {
    return `${this.issuer}${RESOURCE_METADATA_PATH}/${encodeURIComponent(clientId)}`;
  }

  /** The client `ref` (its client_id or row id) names in this tenant, or 404 (another tenant's too). */
  private async load(db: Database | Tx, tenantId: string, ref: string): Promise<Client> {
    const clients = new TenantScope(db, tenantId).clients;
    const c = (await clients.getByClientId(ref)) ?? (await clients.get(ref));
    if (!c) throw notFound(`Client ${ref}`);
    return c;
  }

  private view(c: Client, text: string, strict: boolean): { view: ResourceMetadataView; etag: string } {
    return {
      view: {
        client_id: c.client_id,
        url: this.urlOf(c.client_id),
        strict_introspection: strict,
        document: JSON.parse(text) as ResourceMetadataView['document'],
      },
      etag: etagOf(text),
    };
  }

  async get(tenantId: string, ref: string): Promise<{ view: ResourceMetadataView; etag: string }> {
    await this.directory.requireTenant(tenantId);
    const c = await this.load(this.ds, tenantId, ref);
    const text = await new TenantScope(this.ds, tenantId).clients.resourceMetadata(c.client_id);
    if (text === null) throw notFound(`Protected resource metadata of client ${c.client_id}`);
    return this.view(c, text, c.strict_introspection);
  }

  /**
   * Stores the document (RFC 9728 §2), validated: `resource` one of the client's
   * resource_identifiers, `authorization_servers` defaulting to this issuer,
   * `bearer_methods_supported` to ["header"]. `ifMatch` (RFC 9110 §13.1.1) is compared with
   * the stored document's ETag in the write transaction; with none stored it never matches.
   */
  async put(
    tenantId: string,
    ref: string,
    input: unknown,
    actor: Actor,
    opts: { ifMatch?: string; where?: string } = {},
  ): Promise<{ view: ResourceMetadataView; etag: string; created: boolean }> {
    const where = opts.where ?? '';
    const doc = parseInput(ResourceMetadataInput, input, where);
    const field = (f: string) => [where, f].filter(Boolean).join('.');
    const normalised = {
      ...doc,
      authorization_servers: doc.authorization_servers ?? [this.issuer],
      bearer_methods_supported: doc.bearer_methods_supported ?? ['header'],
    };
    const text = JSON.stringify(normalised);
    if (Buffer.byteLength(text) > MAX_DOCUMENT_BYTES)
      throw badRequest(`${field('document')}: at most ${MAX_DOCUMENT_BYTES} bytes of JSON`, [
        { field: field('document'), message: `at most ${MAX_DOCUMENT_BYTES} bytes of JSON` },
      ]);
    await this.directory.requireTenant(tenantId);
    return this.ds.transaction(async (tx) => {
      const c = await this.load(tx, tenantId, ref);
      if (!c.resource_identifiers.includes(doc.resource)) {
        const message = c.resource_identifiers.length
          ? `must be one of the client's resource_identifiers (${c.resource_identifiers.join(' ')})`
          : 'the client registers no resource_identifiers: it is not a resource server';
        throw badRequest(`${field('resource')}: ${message}`, [{ field: field('resource'), message }]);
      }
      const clients = new TenantScope(tx, tenantId).clients;
      const before = await clients.resourceMetadata(c.client_id);
      if (opts.ifMatch !== undefined && (before === null || !ifMatchSatisfied(opts.ifMatch, etagOf(before))))
        throw new ApiError(
          412,
          'precondition_failed',
          'If-Match does not match the current document; read it again (RFC 9110 §13.1.1).',
        );
      const created = before === null;
      const strict = created || c.strict_introspection;
      await clients.setResourceMetadata(c.client_id, text, Date.now(), created && !c.strict_introspection);
      await audit(tx, actor, {
        tenantId,
        action: 'client.resource_metadata.set',
        targetType: 'client',
        targetId: c.client_id,
        summary: {
          resource: doc.resource,
          created,
          ...(created && !c.strict_introspection ? { strict_introspection: true } : {}),
        },
      });
      return { ...this.view(c, text, strict), created };
    });
  }

  /** Removes the hosted document (404 when there is none); strict introspection is left as it is. */
  async remove(tenantId: string, ref: string, actor: Actor, opts: { ifMatch?: string } = {}): Promise<void> {
    await this.directory.requireTenant(tenantId);
    await this.ds.transaction(async (tx) => {
      const c = await this.load(tx, tenantId, ref);
      const clients = new TenantScope(tx, tenantId).clients;
      const before = await clients.resourceMetadata(c.client_id);
      if (before === null) throw notFound(`Protected resource metadata of client ${c.client_id}`);
      if (opts.ifMatch !== undefined && !ifMatchSatisfied(opts.ifMatch, etagOf(before)))
        throw new ApiError(
          412,
          'precondition_failed',
          'If-Match does not match the current document; read it again (RFC 9110 §13.1.1).',
        );
      await clients.setResourceMetadata(c.client_id, null, Date.now());
      await audit(tx, actor, {
        tenantId,
        action: 'client.resource_metadata.remove',
        targetType: 'client',
        targetId: c.client_id,
        summary: { resource: (JSON.parse(before) as { resource?: unknown }).resource },
      });
    });
  }

  /**
   * The public document of `clientId` with its ETag, or null: no such client, the client or its
   * tenant not active, or no document hosted. One lookup by the globally unique client_id.
   */
  async published(clientId: string): Promise<{ text: string; etag: string } | null> {
    const found = await this.directory.resolveClient(clientId);
    if (!found || found.client.status !== 'active' || found.tenantState !== 'active') return null;
    const text = await new TenantScope(this.ds, found.client.tenant_id).clients.resourceMetadata(clientId);
    return text === null ? null : { text, etag: etagOf(text) };
  }
}
