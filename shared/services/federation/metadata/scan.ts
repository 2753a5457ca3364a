/**
 * Names, the error type, and the entity inventory collector of SAML metadata. The collector is
 * fed saxes events (no DOM) by the verifier (./stream-verify.ts), from the very events whose
 * canonical form the signature's digest covered.
 */
import type { NsTag } from './namespaces.js';

export const NS = {
  md: 'urn:oasis:names:tc:SAML:2.0:metadata',
  ds: 'http://www.w3.org/2000/09/xmldsig#',
  mdrpi: 'urn:oasis:names:tc:SAML:metadata:rpi',
  mdattr: 'urn:oasis:names:tc:SAML:metadata:attribute',
  saml: 'urn:oasis:names:tc:SAML:2.0:assertion',
} as const;

export const ENTITY_CATEGORY = 'http://macedir.org/entity-category';
export const ENTITY_CATEGORY_SUPPORT = 'http://macedir.org/entity-category-support';
export const ASSURANCE_CERTIFICATION = 'urn:oasis:names:tc:SAML:attribute:assurance-certification';
export const HIDE_FROM_DISCOVERY = 'http://refeds.org/category/hide-from-discovery';
export const RESEARCH_AND_SCHOLARSHIP = 'http://refeds.org/category/research-and-scholarship';
export const SIRTFI = 'https://refeds.org/sirtfi';

/** A refusal with a stable code (the trust source's lastErrorCode). */
export class MetadataError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'MetadataError';
  }
}

export type EntityRole = 'saml_idp' | 'saml_sp';

export interface InventoryEntity {
  entityId: string;
  roles: EntityRole[];
  registrationAuthority: string | null;
  entityCategories: string[];
  entityCategorySupport: string[];
  hideFromDiscovery: boolean;
  sirtfi: boolean;
}

export interface Inventory {
  validUntil: string | null;
  cacheDuration: string | null;
  entities: InventoryEntity[];
}

/**
 * Builds the inventory from element events: entityID, roles (IDPSSODescriptor → saml_idp,
 * SPSSODescriptor → saml_sp), mdrpi:RegistrationInfo/@registrationAuthority (an
 * EntitiesDescriptor's applies to the entities inside it, SAML MDRPI §2.1), and the
 * mdattr:EntityAttributes values of entity-category, entity-category-support and
 * assurance-certification (SIRTFI). A duplicate entityID keeps the first occurrence.
 */
export class InventoryCollector {
  readonly out: Inventory = { validUntil: null, cacheDuration: null, entities: [] };
  private readonly seen = new Set<string>();
  private depth = 0;
  private readonly raStack: (string | null)[] = [];
  private current: (InventoryEntity & { depth: number }) | undefined;
  private attrName: string | undefined;
  private inValue = false;
  private value = '';

  open(tag: NsTag): void {
    this.depth += 1;
    const { uri, local } = tag;
    if (this.depth === 1) {
      this.out.validUntil = tag.attributes.validUntil?.value ?? null;
      this.out.cacheDuration = tag.attributes.cacheDuration?.value ?? null;
    }
    if (uri === NS.md && local === 'EntitiesDescriptor') this.raStack.push(this.raStack.at(-1) ?? null);
    if (uri === NS.md && local === 'EntityDescriptor' && !this.current) {
      this.current = {
        entityId: tag.attributes.entityID?.value ?? '',
        roles: [],
        registrationAuthority: this.raStack.at(-1) ?? null,
        entityCategories: [],
        entityCategorySupport: [],
        hideFromDiscovery: false,
        sirtfi: false,
        depth: this.depth,
      };
      return;
    }
    if (uri === NS.mdrpi && local === 'RegistrationInfo') {
      const ra = tag.attributes.registrationAuthority?.value ?? null;
      if (this.current) this.current.registrationAuthority = ra;
      else if (this.raStack.length) this.raStack[this.raStack.length - 1] = ra;
    }
    const cur = this.current;
    if (!cur) return;
    if (uri === NS.md && this.depth === cur.depth + 1) {
      if (local === 'IDPSSODescriptor' && !cur.roles.includes('saml_idp')) cur.roles.push('saml_idp');
      if (local === 'SPSSODescriptor' && !cur.roles.includes('saml_sp')) cur.roles.push('saml_sp');
    }
    if (uri === NS.saml && local === 'Attribute') this.attrName = tag.attributes.Name?.value;
    if (uri === NS.saml && local === 'AttributeValue' && this.attrName) {
      this.inValue = true;
      this.value = '';
    }
  }

  text(t: string): void {
    if (this.inValue) this.value += t;
  }

  close(tag: NsTag): void {
    const { uri, local } = tag;
    const cur = this.current;
    if (cur && this.inValue && uri === NS.saml && local === 'AttributeValue') {
      this.inValue = false;
      const v = this.value.trim();
      if (this.attrName === ENTITY_CATEGORY) {
        if (!cur.entityCategories.includes(v)) cur.entityCategories.push(v);
        if (v === HIDE_FROM_DISCOVERY) cur.hideFromDiscovery = true;
      } else if (this.attrName === ENTITY_CATEGORY_SUPPORT) {
        if (!cur.entityCategorySupport.includes(v)) cur.entityCategorySupport.push(v);
      } else if (this.attrName === ASSURANCE_CERTIFICATION && v === SIRTFI) cur.sirtfi = true;
    }
    if (uri === NS.saml && local === 'Attribute') this.attrName = undefined;
    if (cur && this.depth === cur.depth && uri === NS.md && local === 'EntityDescriptor') {
      if (cur.entityId && !this.seen.has(cur.entityId)) {
        this.seen.add(cur.entityId);
        this.out.entities.push({
          entityId: cur.entityId,
          roles: cur.roles,
          registrationAuthority: cur.registrationAuthority,
          entityCategories: cur.entityCategories,
          entityCategorySupport: cur.entityCategorySupport,
          hideFromDiscovery: cur.hideFromDiscovery,
          sirtfi: cur.sirtfi,
        });
      }
      this.current = undefined;
    }
    if (uri === NS.md && local === 'EntitiesDescriptor') this.raStack.pop();
    this.depth -= 1;
  }
}
