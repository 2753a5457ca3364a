/**
 * The directory's export (docs/directory.md, "Users: import and export"): the import's own
 * formats, so an export imported into an empty tenant gives the same users. Read in pages of
 * users by address (keyset pagination: each page starts after the last address of the one
 * before, so a page costs the same at any depth and no user is read twice), each page's claim
 * values and links in one statement each; one text chunk per page.
 *
 * No secrets: the address, name, email_verified, the active custom claims' values and each
 * upstream link's issuer and subject. Never a passkey, a token, an upstream token or a hash.
 */
import { stringify } from 'csv-stringify/sync';
import type { Database } from '../../db/index.js';
import { TenantScope, type CustomClaimSchemaRow } from '../../repositories/index.js';
import { CLAIM_PREFIX, CSV_FIXED, cellText, type ImportFormat } from './records.js';

export const EXPORT_PAGE = 500;

interface ExportRecord {
  email: string;
  name?: string;
  email_verified?: boolean;
  claims?: Record<string, unknown>;
  upstream?: { issuer: string; subject: string };
}

export async function* exportUsers(ds: Database, tenantId: string, format: ImportFormat): AsyncGenerator<string> {
  const scope = new TenantScope(ds, tenantId);
  const schemas = (await scope.customClaims.listSchemas())
    .filter((s) => s.is_system === 0 && s.is_active === 1)
    .sort((a, b) => a.field_key.localeCompare(b.field_key));
  const byKey = new Map<string, CustomClaimSchemaRow>(schemas.map((s) => [s.field_key, s]));
  const header = [...CSV_FIXED, ...schemas.map((s) => CLAIM_PREFIX + s.field_key)];
  if (format === 'csv') yield stringify([header]);
  let after = '';
  for (;;) {
    const users = await scope.userTransfer.page(after, EXPORT_PAGE);
    if (users.length === 0) return;
    after = users[users.length - 1].email;
    const ids = users.map((u) => u.id);
    const claims = new Map<string, Record<string, unknown>>();
    for (const v of await scope.userTransfer.claimValues(ids)) {
      const held = claims.get(v.user_id) ?? {};
      held[v.field_key] = JSON.parse(v.value_json);
      claims.set(v.user_id, held);
    }
    const links = new Map<string, { issuer: string; subject: string }[]>();
    for (const l of await scope.userTransfer.links(ids)) {
      links.set(l.user_id, [...(links.get(l.user_id) ?? []), { issuer: l.issuer, subject: l.upstream_sub }]);
    }
    const records: ExportRecord[] = [];
    for (const u of users) {
      const own = claims.get(u.id);
      const first: ExportRecord = {
        email: u.email,
        name: u.name,
        email_verified: u.email_verified === 1,
        ...(own ? { claims: own } : {}),
      };
      // A user with several links: one record per link, the later ones the address and the
      // link only (their import adds the link to the user the first one made).
      const mine = links.get(u.id) ?? [];
      records.push(mine.length ? { ...first, upstream: mine[0] } : first);
      for (const l of mine.slice(1)) records.push({ email: u.email, upstream: l });
    }
    if (format === 'jsonl') yield records.map((r) => JSON.stringify(r) + '\n').join('');
    else yield stringify(records.map((r) => csvRow(r, header, byKey)));
  }
}

function csvRow(r: ExportRecord, header: string[], schemas: Map<string, CustomClaimSchemaRow>): string[] {
  const claims = r.claims ?? {};
  return header.map((h) => {
    if (h === 'email') return r.email;
    if (h === 'name') return r.name ?? '';
    if (h === 'email_verified') return r.email_verified === undefined ? '' : String(r.email_verified);
    if (h === 'upstream_issuer') return r.upstream?.issuer ?? '';
    if (h === 'upstream_subject') return r.upstream?.subject ?? '';
    const key = h.slice(CLAIM_PREFIX.length);
    return key in claims ? cellText(schemas.get(key)!, claims[key]) : '';
  });
}
