/**
 * Streaming passes over SAML metadata with saxes (no DOM): the structural pre-check that runs
 * before any DOM parser sees the document, and the entity inventory read from the signed
 * content. saxes does not fetch external entities and does not expand any entity a DOCTYPE
 * declares (it refuses undeclared references), and we refuse the DOCTYPE outright.
 */
import { SaxesParser, type SaxesTagNS } from 'saxes';

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

export interface Structure {
  rootName: 'EntitiesDescriptor' | 'EntityDescriptor';
  rootId: string;
  /** The Signature element's text, with the root's namespace declarations it relies on. */
  signatureXml: string;
  referenceUri: string;
  /** X509Certificate of the Signature's KeyInfo (never trusted; only to name a new key). */
  keyInfoCertB64?: string;
}

function parserFor(onError: (e: Error) => void): SaxesParser<{ xmlns: true }> {
  const p = new SaxesParser({ xmlns: true, position: true });
  p.on('doctype', () => {
    // A DOCTYPE can declare entities (billion laughs, external fetches); SAML metadata never
    // needs one (SAML V2.0 Metadata §3: no DTD), so the document is refused before any DOM.
    throw new MetadataError('metadata_doctype', 'the document has a DOCTYPE, which is refused');
  });
  p.on('error', onError);
  return p;
}

function asMetadataError(e: unknown): MetadataError {
  if (e instanceof MetadataError) return e;
  return new MetadataError('metadata_xml', `not well-formed XML: ${(e as Error).message.slice(0, 200)}`);
}

/**
 * The structural checks of the signature (XML-DSig core §3.2 leaves the "what was signed"
 * question to the application; SAML metadata profiles answer it): the root is an
 * EntitiesDescriptor or EntityDescriptor with an ID; exactly ONE ds:Signature in the whole
 * document, a child of the root; one SignedInfo with exactly one Reference whose URI is
 * "#<root ID>" (enveloped); its transforms only enveloped-signature and exclusive c14n. Any
 * other shape is the signature-wrapping pattern (a valid signature over one element, the
 * consumer reading another) and is refused.
 */
export function scanStructure(xml: string): Structure {
  let err: unknown;
  const p = parserFor((e) => {
    err ??= e;
  });
  let depth = 0;
  let rootName: Structure['rootName'] | undefined;
  let rootId = '';
  let rootNs: Record<string, string> = {};
  let signatures = 0;
  let sigStart = -1;
  let sigEnd = -1;
  let sigDepth = -1;
  let sigTagNs: Record<string, string> = {};
  let signedInfos = 0;
  const references: string[] = [];
  const transforms: string[] = [];
  let inCert = false;
  let certText = '';
  const path: string[] = [];
  p.on('opentag', (tag: SaxesTagNS) => {
    depth += 1;
    path.push(`${tag.uri}|${tag.local}`);
    if (depth === 1) {
      if (tag.uri !== NS.md || (tag.local !== 'EntitiesDescriptor' && tag.local !== 'EntityDescriptor'))
        throw new MetadataError('metadata_root', 'the root is not an md:EntitiesDescriptor or md:EntityDescriptor');
      rootName = tag.local;
      rootId = tag.attributes.ID?.value ?? '';
      rootNs = tag.ns;
    }
    if (tag.uri === NS.ds && tag.local === 'Signature') {
      signatures += 1;
      if (signatures > 1) throw new MetadataError('metadata_signature_structure', 'more than one Signature element');
      if (depth !== 2)
        throw new MetadataError('metadata_signature_structure', 'the Signature is not a child of the root element');
      sigDepth = depth;
      sigStart = xml.lastIndexOf('<', p.position - 1);
      sigTagNs = tag.ns;
    }
    if (sigDepth > 0 && tag.uri === NS.ds) {
      const parent = path[path.length - 2];
      if (tag.local === 'SignedInfo' && depth === 3) signedInfos += 1;
      if (tag.local === 'Reference' && parent === `${NS.ds}|SignedInfo`) references.push(tag.attributes.URI?.value ?? '');
      if (tag.local === 'Transform' && parent === `${NS.ds}|Transforms`)
        transforms.push(tag.attributes.Algorithm?.value ?? '');
      if (tag.local === 'X509Certificate' && path.includes(`${NS.ds}|KeyInfo`) && !certText) inCert = true;
    }
  });
  p.on('text', (t) => {
    if (inCert) certText += t;
  });
  p.on('closetag', (tag: SaxesTagNS) => {
    if (inCert && tag.local === 'X509Certificate') inCert = false;
    if (depth === sigDepth && tag.uri === NS.ds && tag.local === 'Signature') {
      sigEnd = p.position;
      sigDepth = -1;
    }
    path.pop();
    depth -= 1;
  });
  try {
    p.write(xml).close();
  } catch (e) {
    throw asMetadataError(e);
  }
  if (err) throw asMetadataError(err);
  if (!rootName) throw new MetadataError('metadata_root', 'no root element');
  if (signatures === 0) throw new MetadataError('metadata_unsigned', 'the metadata is not signed');
  if (!rootId) throw new MetadataError('metadata_signature_structure', 'the root element has no ID to sign');
  if (signedInfos !== 1 || references.length !== 1)
    throw new MetadataError('metadata_signature_structure', 'the Signature must have one SignedInfo with one Reference');
  if (references[0] !== `#${rootId}`)
    throw new MetadataError('metadata_signature_structure', 'the signature does not reference the root element');
  const allowed = new Set([
    'http://www.w3.org/2000/09/xmldsig#enveloped-signature',
    'http://www.w3.org/2001/10/xml-exc-c14n#',
  ]);
  if (!transforms.includes('http://www.w3.org/2000/09/xmldsig#enveloped-signature') || transforms.some((t) => !allowed.has(t)))
    throw new MetadataError('metadata_algorithm', 'the reference transforms must be enveloped-signature and exclusive c14n');
  // The Signature's own text lacks the root's namespace declarations (ds: is usually declared
  // on the root); they are added to its start tag so it parses alone. Exclusive c14n renders
  // only the namespaces an element uses, so the extra declarations change nothing signed.
  let sig = xml.slice(sigStart, sigEnd);
  const extra = Object.entries(rootNs)
    .filter(([prefix]) => !(prefix in sigTagNs))
    .map(([prefix, uri]) => ` ${prefix ? `xmlns:${prefix}` : 'xmlns'}="${uri.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"`)
    .join('');
  const nameEnd = sig.search(/[\s/>]/);
  sig = sig.slice(0, nameEnd) + extra + sig.slice(nameEnd);
  return {
    rootName,
    rootId,
    signatureXml: sig,
    referenceUri: references[0],
    ...(certText.trim() ? { keyInfoCertB64: certText.replace(/\s+/g, '') } : {}),
  };
}

export interface InventoryEntity {
  entityId: string;
  roles: ('saml_idp' | 'saml_sp')[];
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
 * The entity inventory, streamed from (signed) metadata: entityID, roles (IDPSSODescriptor →
 * saml_idp, SPSSODescriptor → saml_sp), mdrpi:RegistrationInfo/@registrationAuthority (an
 * EntitiesDescriptor's applies to the entities it holds, SAML MDRPI §2.1), and the
 * mdattr:EntityAttributes values of entity-category, entity-category-support and
 * assurance-certification (SIRTFI). A duplicate entityID keeps the first (eduGAIN practice).
 */
export function scanInventory(xml: string): Inventory {
  let err: unknown;
  const p = parserFor((e) => {
    err ??= e;
  });
  const out: Inventory = { validUntil: null, cacheDuration: null, entities: [] };
  const seen = new Set<string>();
  let depth = 0;
  const raStack: (string | null)[] = [];
  let current: (InventoryEntity & { depth: number }) | undefined;
  let attrName: string | undefined;
  let inValue = false;
  let value = '';
  p.on('opentag', (tag: SaxesTagNS) => {
    depth += 1;
    if (tag.uri === NS.md && (tag.local === 'EntitiesDescriptor' || tag.local === 'EntityDescriptor') && depth === 1) {
      out.validUntil = tag.attributes.validUntil?.value ?? null;
      out.cacheDuration = tag.attributes.cacheDuration?.value ?? null;
    }
    if (tag.uri === NS.md && tag.local === 'EntitiesDescriptor') raStack.push(raStack.at(-1) ?? null);
    if (tag.uri === NS.md && tag.local === 'EntityDescriptor' && !current) {
      current = {
        entityId: tag.attributes.entityID?.value ?? '',
        roles: [],
        registrationAuthority: raStack.at(-1) ?? null,
        entityCategories: [],
        entityCategorySupport: [],
        hideFromDiscovery: false,
        sirtfi: false,
        depth,
      };
      return;
    }
    if (tag.uri === NS.mdrpi && tag.local === 'RegistrationInfo') {
      const ra = tag.attributes.registrationAuthority?.value ?? null;
      if (current) current.registrationAuthority = ra;
      else if (raStack.length) raStack[raStack.length - 1] = ra;
    }
    if (!current) return;
    if (tag.uri === NS.md && depth === current.depth + 1) {
      if (tag.local === 'IDPSSODescriptor' && !current.roles.includes('saml_idp')) current.roles.push('saml_idp');
      if (tag.local === 'SPSSODescriptor' && !current.roles.includes('saml_sp')) current.roles.push('saml_sp');
    }
    if (tag.uri === NS.saml && tag.local === 'Attribute') attrName = tag.attributes.Name?.value;
    if (tag.uri === NS.saml && tag.local === 'AttributeValue' && attrName) {
      inValue = true;
      value = '';
    }
  });
  p.on('text', (t) => {
    if (inValue) value += t;
  });
  p.on('closetag', (tag: SaxesTagNS) => {
    if (current && inValue && tag.uri === NS.saml && tag.local === 'AttributeValue') {
      inValue = false;
      const v = value.trim();
      if (attrName === ENTITY_CATEGORY) {
        if (!current.entityCategories.includes(v)) current.entityCategories.push(v);
        if (v === HIDE_FROM_DISCOVERY) current.hideFromDiscovery = true;
      } else if (attrName === ENTITY_CATEGORY_SUPPORT) {
        if (!current.entityCategorySupport.includes(v)) current.entityCategorySupport.push(v);
      } else if (attrName === ASSURANCE_CERTIFICATION && v === SIRTFI) current.sirtfi = true;
    }
    if (tag.uri === NS.saml && tag.local === 'Attribute') attrName = undefined;
    if (current && depth === current.depth && tag.uri === NS.md && tag.local === 'EntityDescriptor') {
      const { depth: _d, ...entity } = current;
      void _d;
      if (entity.entityId && !seen.has(entity.entityId)) {
        seen.add(entity.entityId);
        out.entities.push(entity);
      }
      current = undefined;
    }
    if (tag.uri === NS.md && tag.local === 'EntitiesDescriptor') raStack.pop();
    depth -= 1;
  });
  try {
    p.write(xml).close();
  } catch (e) {
    throw asMetadataError(e);
  }
  if (err) throw asMetadataError(err);
  return out;
}
