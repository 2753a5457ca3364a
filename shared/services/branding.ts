/**
 * A tenant's branding (docs/branding.md), kept in `tenants.settings.branding`: the display
 * name, logo, primary colour, support link and custom CSS its sign-in pages (and mails) show.
 * `get` is what pages and mails read; `view` and `update` are the admin API's and the CLI's,
 * with a strong ETag over the stored branding for If-Match (RFC 9110 §13.1.1).
 */
import type { Database } from '../db/index.js';
import { notFound } from '../errors.js';
import { TenantRepository } from '../repositories/index.js';
import { BrandingInput } from '../schemas/branding.js';
import { parseInput } from '../schemas/validate.js';
import type { Actor } from './audit.js';
import { textColourOn } from './branding-colour.js';
import type { TenantBranding } from './branding-types.js';
import { requireSectionMatch, sectionEtag, updateSettingsSection } from './tenant-settings.js';

/** The branding as stored: only the fields an operator set. */
export type StoredBranding = BrandingInput;

export interface BrandingView {
  tenantId: string;
  branding: StoredBranding;
  /** What the pages show: the name defaulted, and the legible text colour on the primary colour. */
  effective: TenantBranding & { primaryTextColor?: string };
}

const FIELDS = ['displayName', 'logoUrl', 'primaryColor', 'supportUrl', 'customCss'] as const;

/** The stored section, keeping only well-formed string fields (a hand-edited document cannot break a page). */
function storedOf(section: unknown): StoredBranding {
  const r = BrandingInput.safeParse(section ?? {});
  if (r.success) return r.data;
  const out: Record<string, string> = {};
  const raw = (section && typeof section === 'object' ? section : {}) as Record<string, unknown>;
  for (const k of FIELDS) {
    const one = BrandingInput.safeParse({ [k]: raw[k] });
    if (one.success && typeof raw[k] === 'string') Object.assign(out, one.data);
  }
  return out;
}

function effectiveOf(tenantName: string, b: StoredBranding): BrandingView['effective'] {
  return {
    displayName: b.displayName ?? tenantName,
    ...(b.logoUrl ? { logoUrl: b.logoUrl } : {}),
    ...(b.primaryColor ? { primaryColor: b.primaryColor, primaryTextColor: textColourOn(b.primaryColor) } : {}),
    ...(b.supportUrl ? { supportUrl: b.supportUrl } : {}),
    ...(b.customCss ? { customCss: b.customCss } : {}),
  };
}

/**
 * The look of a tenant from its name and its stored `branding` section, without a read: what
 * `get` answers, for callers that read the tenant already (the login pages, from the client
 * lookup of Lookups.clientByClientId).
 */
export function brandingFrom(tenantName: string, section: unknown): TenantBranding {
  const { primaryTextColor: _text, ...branding } = effectiveOf(tenantName, storedOf(section));
  return branding;
}

/** A strong validator (RFC 9110 §8.8.3) of the stored branding. */
export function brandingEtag(b: StoredBranding): string {
  return sectionEtag(b);
}

export class BrandingService {
  /** The validated body of PUT …/branding. */
  readonly input = BrandingInput;

  constructor(private readonly ds: Database) {}

  private async load(tenantId: string): Promise<{ name: string; stored: StoredBranding }> {
    const tenant = await new TenantRepository(this.ds).get(tenantId);
    if (!tenant) throw notFound(`Tenant ${tenantId}`);
    return { name: tenant.name, stored: storedOf(tenant.settings?.branding) };
  }

  /**
   * The tenant's look on its pages and in its mails; `displayName` defaults to the tenant's name.
   * A tenant that does not exist is a 404 (ApiError).
   */
  async get(tenantId: string): Promise<TenantBranding> {
    const tenant = await new TenantRepository(this.ds).get(tenantId);
    if (!tenant) throw notFound(`Tenant ${tenantId}`);
    return brandingFrom(tenant.name, tenant.settings?.branding);
  }

  /** The stored branding, what the pages show, and the ETag. */
  async view(tenantId: string): Promise<{ view: BrandingView; etag: string }> {
    const { name, stored } = await this.load(tenantId);
    return { view: { tenantId, branding: stored, effective: effectiveOf(name, stored) }, etag: brandingEtag(stored) };
  }

  /**
   * Replaces the branding (PUT: a field left out is cleared), audited as
   * `tenant.branding.update` with before and after, in one transaction. `ifMatch`: compared
   * with the stored branding's ETag inside that transaction (412 on a mismatch).
   */
  async update(
    tenantId: string,
    input: unknown,
    actor: Actor,
    opts: { ifMatch?: string; where?: string } = {},
  ): Promise<{ view: BrandingView; etag: string }> {
    const parsed = parseInput(BrandingInput, input, opts.where ?? '');
    const next: StoredBranding = {};
    for (const k of FIELDS) if (parsed[k] !== undefined) next[k] = parsed[k];
    if (next.primaryColor) next.primaryColor = next.primaryColor.toLowerCase();
    await updateSettingsSection(
      this.ds,
      { tenantId, section: 'branding', action: 'tenant.branding.update', actor },
      (doc) => {
        const before = storedOf(doc.branding);
        requireSectionMatch(opts.ifMatch, brandingEtag(before), 'branding');
        return { before, after: next };
      },
    );
    return this.view(tenantId);
  }
}
