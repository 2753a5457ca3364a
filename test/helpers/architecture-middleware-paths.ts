/**
 * "No path lists in middleware" (docs/architecture.md, "Route declarations"): what differs
 * between routes (body parser, error style, CORS, tenant check) is declared by each route and
 * mounted by the registry, so the middleware under daemon/middleware/ never decides by the
 * request path. Comments aside, a file there may not hold a path literal ('/token'), a regex
 * anchored on a path (/^\/api/), nor compare or look up the request's path or URL.
 */
import type { Violation } from './architecture.js';

const PATH_LITERAL = /(['"`])\/[A-Za-z0-9_.~:-]/;
const PATH_REGEX = /\/\^\\\//;
const REQ_PATH = String.raw`ctx\.(?:request\.)?(?:path|url|originalUrl)\b`;
const PATH_DECISION = new RegExp(
  [
    String.raw`${REQ_PATH}\s*(?:===|!==|==|!=)`,
    String.raw`(?:===|!==|==|!=)\s*${REQ_PATH}`,
    String.raw`\.(?:has|get|test|exec|includes|startsWith|endsWith|match|find|some)\(\s*${REQ_PATH}`,
    String.raw`${REQ_PATH}\.(?:startsWith|endsWith|match|includes|split)\(`,
    String.raw`switch\s*\(\s*${REQ_PATH}`,
    String.raw`\[\s*${REQ_PATH}\s*\]`,
  ].join('|'),
);

export function checkMiddlewarePaths(file: string, src: string): Violation[] {
  if (!file.startsWith('daemon/middleware/')) return [];
  for (const [re, what] of [
    [PATH_LITERAL, 'a path literal'],
    [PATH_REGEX, 'a regex on a path'],
    [PATH_DECISION, 'a decision on the request path'],
  ] as const) {
    const m = re.exec(src);
    if (m) return [{ file, rule: 'path-list-in-middleware', detail: `${what}: ${m[0]} (declare it on the route)` }];
  }
  return [];
}
