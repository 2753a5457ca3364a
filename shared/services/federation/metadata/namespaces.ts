/**
 * Namespaces in XML 1.0 (W3C REC xml-names, third edition) for the streaming verifier, in
 * constant work per element whatever its depth.
 *
 * saxes resolves a prefix by walking the stack of open elements (`resolve` looks at each
 * ancestor's own declarations in turn), so a prefix declared at the root and used N levels
 * down costs N lookups: a deeply nested document costs time quadratic in its depth. Here the
 * parser runs without its namespace option and this scope keeps, per prefix, the stack of its
 * bindings: resolving is one Map lookup and the top of an array; an element's own
 * declarations are pushed when it opens and popped when it closes. The checks saxes made in
 * namespace mode are made here, with the same outcomes:
 * - a prefixed element or attribute name must be a QName with a bound prefix (§5, NSC:
 *   Prefix Declared); an element may not have the prefix `xmlns` (§3);
 * - `xml` is bound to its namespace and nothing else is; `xmlns` is never declared; neither
 *   namespace is bound to another prefix nor made the default (§3, NSC: Reserved Prefixes and
 *   Namespace Names);
 * - `xmlns:p=""` (undeclaring a prefix) is not allowed in XML 1.0 (§5, NSC: No Prefix Undeclaring);
 * - no two attributes of an element have the same expanded name (§6.3, NSC: Attributes Unique).
 */

export const XML_NS = 'http://www.w3.org/XML/1998/namespace';
export const XMLNS_NS = 'http://www.w3.org/2000/xmlns/';

export interface NsAttribute {
  name: string;
  prefix: string;
  local: string;
  uri: string;
  value: string;
}

/** An element with its names resolved: what the c14n writer and the inventory collector read. */
export interface NsTag {
  name: string;
  prefix: string;
  local: string;
  uri: string;
  /** By qualified name, in document order. */
  attributes: Record<string, NsAttribute>;
}

/** A namespace well-formedness error; the verifier reports it as not well-formed XML. */
export class NamespaceError extends Error {}

function qname(name: string): { prefix: string; local: string } {
  const colon = name.indexOf(':');
  if (colon === -1) return { prefix: '', local: name };
  const prefix = name.slice(0, colon);
  const local = name.slice(colon + 1);
  if (prefix === '' || local === '' || local.includes(':')) throw new NamespaceError(`malformed name: ${name}`);
  return { prefix, local };
}

function checkPair(prefix: string, uri: string): void {
  if (prefix === 'xml' && uri !== XML_NS) throw new NamespaceError(`the xml prefix must be bound to ${XML_NS}`);
  if (prefix === 'xmlns') throw new NamespaceError('the xmlns prefix may not be declared');
  if (uri === XMLNS_NS) throw new NamespaceError(`no prefix, nor the default, may be bound to ${XMLNS_NS}`);
  if (uri === XML_NS && prefix !== 'xml') throw new NamespaceError(`${XML_NS} may be bound to the xml prefix only`);
}

export class NamespaceScope {
  /** Bindings in scope, per prefix, innermost last. */
  private readonly bindings = new Map<string, string[]>([
    ['xml', [XML_NS]],
    ['xmlns', [XMLNS_NS]],
  ]);
  /** The prefixes each open element declared, innermost last. */
  private readonly declared: string[][] = [];

  private resolve(prefix: string): string | undefined {
    const s = this.bindings.get(prefix);
    return s && s.length ? s[s.length - 1] : undefined;
  }

  private bind(prefix: string, uri: string, mine: string[]): void {
    let s = this.bindings.get(prefix);
    if (!s) this.bindings.set(prefix, (s = []));
    s.push(uri);
    mine.push(prefix);
  }

  /** An element opened with its raw attributes (qualified name → value, document order). */
  open(name: string, raw: Record<string, string>): NsTag {
    const mine: string[] = [];
    // Its own declarations first: they are in scope for the element's own name and attributes.
    for (const [attr, value] of Object.entries(raw)) {
      if (attr === 'xmlns') {
        const uri = value.trim();
        checkPair('', uri);
        this.bind('', uri, mine);
      } else if (attr.startsWith('xmlns:')) {
        const { local } = qname(attr);
        const uri = value.trim();
        if (uri === '') throw new NamespaceError(`xmlns:${local}="" may not undeclare a prefix in XML 1.0`);
        checkPair(local, uri);
        this.bind(local, uri, mine);
      }
    }
    this.declared.push(mine);
    const { prefix, local } = qname(name);
    if (prefix === 'xmlns') throw new NamespaceError('an element may not have the xmlns prefix');
    const uri = this.resolve(prefix) ?? '';
    if (prefix !== '' && uri === '') throw new NamespaceError(`unbound namespace prefix: ${prefix}`);
    const attributes: Record<string, NsAttribute> = Object.create(null) as Record<string, NsAttribute>;
    const seen = new Set<string>();
    for (const [attr, value] of Object.entries(raw)) {
      const q = qname(attr);
      let auri: string;
      // The default namespace does not apply to attributes (xml-names §6.2).
      if (q.prefix === '') auri = attr === 'xmlns' ? XMLNS_NS : '';
      else {
        const r = this.resolve(q.prefix);
        if (r === undefined || r === '') throw new NamespaceError(`unbound namespace prefix: ${q.prefix}`);
        auri = r;
      }
      const expanded = `{${auri}}${q.local}`;
      if (seen.has(expanded)) throw new NamespaceError(`duplicate attribute: ${expanded}`);
      seen.add(expanded);
      attributes[attr] = { name: attr, prefix: q.prefix, local: q.local, uri: auri, value };
    }
    return { name, prefix, local, uri, attributes };
  }

  /** The element opened last closed: its declarations go out of scope. */
  close(): void {
    for (const prefix of this.declared.pop() ?? []) this.bindings.get(prefix)!.pop();
  }
}
