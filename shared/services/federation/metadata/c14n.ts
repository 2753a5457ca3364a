/**
 * Exclusive XML Canonicalization 1.0 (W3C REC xml-exc-c14n, without comments) computed from
 * saxes events, for the digest of an enveloped signature over a document too large for a DOM.
 * The output is written in pieces to a sink (a hash), never held whole.
 *
 * What it implements, by the spec's section:
 * - §3 (exclusive rules): a namespace declaration is rendered on an element only when the
 *   element or one of its attributes visibly uses its prefix and the nearest output ancestor
 *   did not already render the same binding; `xmlns=""` when an unprefixed element in no
 *   namespace sits under a rendered default namespace; xml:* attributes are not inherited.
 * - C14N 1.0 §2.3/§4: no XML declaration or DOCTYPE, comments removed, CDATA replaced by its
 *   escaped characters, empty elements as start/end pairs, namespace declarations sorted by
 *   prefix then attributes by (namespace URI, local name), the character escapes of text and
 *   attribute values, line ends already normalised by the parser.
 * The InclusiveNamespaces PrefixList is not supported (the caller refuses a transform that
 * names one). test/federation/metadata-verify.test.ts compares this output with xml-crypto's
 * DOM canonicalizer on the fixtures. One known difference: a processing instruction inside the
 * root is rendered `<?target data?>` here, as C14N 1.0 §2.3 and the common signers (xmlsec,
 * Santuario) do; xml-crypto 6 renders only its data.
 */
import type { NsTag } from './namespaces.js';

const XMLNS_URI = 'http://www.w3.org/2000/xmlns/';

export function escText(s: string): string {
  return s.replace(/[&<>\r]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&#xD;'));
}

export function escAttr(s: string): string {
  return s.replace(/[&<"\t\n\r]/g, (c) =>
    c === '&'
      ? '&amp;'
      : c === '<'
        ? '&lt;'
        : c === '"'
          ? '&quot;'
          : c === '\t'
            ? '&#x9;'
            : c === '\n'
              ? '&#xA;'
              : '&#xD;',
  );
}

export class ExcC14nWriter {
  /**
   * The bindings the open output elements rendered, per prefix, innermost last; and the
   * prefixes each open element rendered. Looking one up is constant work, not a walk up the
   * ancestors (which made a deep document cost time quadratic in its depth).
   */
  private readonly rendered = new Map<string, string[]>();
  private readonly renderedBy: string[][] = [];

  constructor(private readonly sink: (s: string) => void) {}

  private inScope(prefix: string): string | undefined {
    const s = this.rendered.get(prefix);
    return s && s.length ? s[s.length - 1] : undefined;
  }

  open(tag: NsTag): void {
    const used = new Map<string, string>();
    used.set(tag.prefix, tag.uri);
    const attrs: { uri: string; local: string; name: string; value: string }[] = [];
    for (const a of Object.values(tag.attributes)) {
      if (a.uri === XMLNS_URI || a.name === 'xmlns') continue;
      if (a.prefix && a.prefix !== 'xml') used.set(a.prefix, a.uri);
      attrs.push({ uri: a.uri, local: a.local, name: a.name, value: a.value });
    }
    const mine = new Map<string, string>();
    const decls: [string, string][] = [];
    for (const [prefix, uri] of used) {
      const current = this.inScope(prefix);
      if (prefix === '') {
        // The default namespace: render it when it differs from what the output ancestors
        // rendered; an empty one only to undo a rendered non-empty one (exc-c14n §3).
        if ((current ?? '') !== uri) {
          decls.push(['', uri]);
          mine.set('', uri);
        }
      } else if (current !== uri) {
        decls.push([prefix, uri]);
        mine.set(prefix, uri);
      }
    }
    decls.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    attrs.sort((a, b) => (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : a.local < b.local ? -1 : a.local > b.local ? 1 : 0));
    let out = `<${tag.name}`;
    for (const [prefix, uri] of decls)
      out += prefix ? ` xmlns:${prefix}="${escAttr(uri)}"` : ` xmlns="${escAttr(uri)}"`;
    for (const a of attrs) out += ` ${a.name}="${escAttr(a.value)}"`;
    this.sink(out + '>');
    for (const [prefix, uri] of mine) {
      let s = this.rendered.get(prefix);
      if (!s) this.rendered.set(prefix, (s = []));
      s.push(uri);
    }
    this.renderedBy.push([...mine.keys()]);
  }

  text(t: string): void {
    if (t) this.sink(escText(t));
  }

  pi(target: string, body: string): void {
    this.sink(body ? `<?${target} ${body}?>` : `<?${target}?>`);
  }

  close(tag: NsTag): void {
    for (const prefix of this.renderedBy.pop() ?? []) this.rendered.get(prefix)!.pop();
    this.sink(`</${tag.name}>`);
  }
}
