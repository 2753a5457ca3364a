/**
 * A tenant's settings document is one JSON object that several features share (email routing,
 * token exchange, consent policy versions). Each feature replaces its own section with a
 * read-modify-write, so the row is locked for it (SELECT … FOR UPDATE on MySQL/MariaDB; SQLite
 * serialises writers anyway) and a concurrent change to another section is not overwritten.
 */
import { createHash } from 'node:crypto';
import type { JsonObject } from '../db/entities.js';
import type { Database } from '../db/index.js';
import { ApiError, notFound } from '../errors.js';
import { TenantRepository } from '../repositories/index.js';
import { ifMatchSatisfied } from './agents/terms.js';
import { audit, type Actor } from './audit.js';
import { canonicalize } from './federation/jcs.js';

/**
 * A strong validator (RFC 9110 §8.8.3) of a stored section: a hash of its canonical JSON
 * (RFC 8785), so the same fields in another order are the same ETag.
 */
export function sectionEtag(section: unknown): string {
  return `"${createHash('sha256').update(canonicalize(section)).digest('base64url').slice(0, 32)}"`;
}

/**
 * A PUT's optional If-Match against the section as `change` read it (RFC 9110 §13.1.1): 412
 * `precondition_failed` on a mismatch, naming `what` ("the branding's current ETag").
 */
export function requireSectionMatch(ifMatch: string | undefined, etag: string, what: string): void {
  if (ifMatch !== undefined && !ifMatchSatisfied(ifMatch, etag))
    throw new ApiError(
      412,
      'precondition_failed',
      `If-Match does not match the ${what}'s current ETag; read it again (RFC 9110 §13.1.1).`,
    );
}

/**
 * Replaces the section `section` of the tenant's settings with what `change` returns, and
 * audits `{ before, after }` under `action`, in one transaction. `change` sees the whole
 * document (never null) and may throw to refuse the change, which then writes nothing.
 * Resolves to the new section; a tenant that does not exist is 404.
 */
export async function updateSettingsSection<T>(
  ds: Database,
  p: { tenantId: string; section: string; action: string; actor: Actor },
  change: (doc: JsonObject) => { before: unknown; after: T },
): Promise<T> {
  return ds.transaction(async (tx) => {
    const tenants = new TenantRepository(tx);
    const stored = await tenants.settings(p.tenantId, { forUpdate: true });
    if (stored === undefined) throw notFound(`Tenant ${p.tenantId}`);
    const doc = stored ?? {};
    const { before, after } = change(doc);
    await tenants.writeSettings(p.tenantId, { ...doc, [p.section]: after }, Date.now());
    await audit(tx, p.actor, {
      tenantId: p.tenantId,
      action: p.action,
      targetType: 'tenant',
      targetId: p.tenantId,
      summary: { before, after },
    });
    return after;
  });
}

/**
 * A tenant policy kept whole in one section of the settings (the DPoP, FAPI 2.0 and
 * authorization request policies): read as `of` reads the stored value (a malformed one as its
 * default), replaced whole under If-Match and audited with before and after.
 */
export class PolicySection<T> {
  constructor(
    private readonly ds: Database,
    private readonly spec: { section: string; action: string; what: string; of: (stored: unknown) => T },
  ) {}

  /** The stored policy; a tenant that does not exist is 404. */
  async read(tenantId: string): Promise<T> {
    const settings = await new TenantRepository(this.ds).settings(tenantId);
    if (settings === undefined) throw notFound(`Tenant ${tenantId}`);
    return this.spec.of(settings?.[this.spec.section]);
  }

  /** Replaces the policy (PUT) in one transaction; `ifMatch` is compared inside it (412). */
  replace(tenantId: string, next: T, actor: Actor, ifMatch?: string): Promise<T> {
    const { section, action, what, of } = this.spec;
    return updateSettingsSection(this.ds, { tenantId, section, action, actor }, (doc) => {
      const before = of(doc[section]);
      requireSectionMatch(ifMatch, sectionEtag(before), what);
      return { before, after: next };
    });
  }
}
