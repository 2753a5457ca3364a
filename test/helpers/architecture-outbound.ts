/**
 * The outbound rule of docs/architecture.md ("Outbound HTTP"): every outbound HTTP request of
 * daemon/, shared/ and cli/ goes through the one client, shared/net/outbound.ts, which holds the
 * SSRF guard. Anywhere else, these are refused: `http.request`/`https.request`/`http.get`/
 * `https.get` (by namespace or named import), a call of the global `fetch` (`fetch(`,
 * `globalThis.fetch(`), and any value import of undici (its `request`, `fetch`, agents).
 * bench/ and test/ are not checked. Read from the syntax tree, so a `fetch(` inside a string
 * (the passkey pages' browser script) or a comment is not taken for a call.
 */
import ts from 'typescript';

/** The one module that may make outbound requests. */
export const OUTBOUND_CLIENT = 'shared/net/outbound.ts';
const CHECKED = ['daemon/', 'shared/', 'cli/'];
const NODE_HTTP = new Set(['http', 'https', 'node:http', 'node:https']);
const REQUESTS = new Set(['request', 'get']);

/** Violations of the outbound rule in `files` (repository-relative path → text). */
export function checkOutbound(files: Map<string, string>): { file: string; rule: string; detail: string }[] {
  const out: { file: string; rule: string; detail: string }[] = [];
  for (const [file, text] of files) {
    if (!CHECKED.some((d) => file.startsWith(d)) || file === OUTBOUND_CLIENT) continue;
    const found = (detail: string) => out.push({ file, rule: 'outbound-outside-client', detail });
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
    // Names bound by imports: `import * as https`/`import https` (namespaces) and
    // `import { request as r }` from node:http(s) (request functions).
    const namespaces = new Set<string>();
    const requestFns = new Set<string>();
    for (const st of sf.statements) {
      if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier)) continue;
      const spec = st.moduleSpecifier.text;
      const clause = st.importClause;
      if (!clause || clause.isTypeOnly) continue;
      if (spec === 'undici') {
        found("imports 'undici'");
        continue;
      }
      if (!NODE_HTTP.has(spec)) continue;
      if (clause.name) namespaces.add(clause.name.text);
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) namespaces.add(bindings.name.text);
      if (bindings && ts.isNamedImports(bindings))
        for (const el of bindings.elements)
          if (!el.isTypeOnly && REQUESTS.has((el.propertyName ?? el.name).text)) requestFns.add(el.name.text);
    }
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node)) {
        const callee = node.expression;
        if (ts.isIdentifier(callee) && callee.text === 'fetch') found('calls fetch(');
        if (ts.isIdentifier(callee) && requestFns.has(callee.text)) found(`calls ${callee.text}( of node:http(s)`);
        if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression)) {
          const [obj, prop] = [callee.expression.text, callee.name.text];
          if (prop === 'fetch' && obj === 'globalThis') found('calls globalThis.fetch(');
          if (REQUESTS.has(prop) && (namespaces.has(obj) || obj === 'http' || obj === 'https'))
            found(`calls ${obj}.${prop}(`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}
