/**
 * The OpenAPI 3.1 document of the declared routes (daemon/openapi.ts), served at /openapi.json
 * and linted by `npm run lint:openapi` (docs/openapi.md): one operation per documented route,
 * each with a stable `operationId`; the error object once, as `#/components/schemas/Error`,
 * referenced by every error response; the admin API's authentication answers once, under
 * `components/responses`.
 */
import { z } from 'zod';
import { WebauthnSignal } from '../shared/schemas/passkeys.js';

/**
 * The error object every error response carries (interface specification, "Error object"):
 * rendered by the one error renderer (koa-error-handler.ts), every field optional.
 */
export const ErrorObject = z
  .looseObject({
    error: z.string().optional().describe('The error code (RFC 6749 §5.2 style), e.g. invalid_request'),
    message: z.string().optional().describe('What went wrong, for a person'),
    error_description: z.string().optional().describe('The same, as RFC 6749 §5.2 names it (OAuth endpoints)'),
    error_code: z
      .string()
      .regex(/^[A-Z]{2}[0-9]{6}$/)
      .optional()
      .describe('The user API only: a stable error category to give to support'),
    error_id: z.uuid().optional().describe('The user API only: this occurrence, also in the log'),
    webauthn_signal: WebauthnSignal.optional().describe(
      'Passkey sign-in only: unknown_credential true when the tenant no longer knows the credential',
    ),
  })
  .describe('The error object (docs/errors.md)');

const ERROR_REF = { $ref: '#/components/schemas/Error' } as const;

/** A response a route declares, by status. */
export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
  /** Response headers the route sets (e.g. ETag), by name: their description. */
  headers?: Record<string, string>;
  /** Names the response under components/responses: every route declaring it shares it. */
  shared?: string;
}

/** What the document reads of a route declaration (RouteSpec, daemon/openapi.ts). */
export interface DocumentedRoute {
  method: string;
  path: string;
  summary: string;
  tags: string[];
  security: string;
  scopes?: string[];
  operationId?: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  bodyType?: 'json' | 'form';
  form?: z.ZodType;
  headers?: { name: string; description: string; required?: boolean; schema: z.ZodType }[];
  responses: Record<number, ResponseSpec>;
  document?: boolean;
}

// ---- operationId ----

/** Path segments that name no resource: left out of derived operationIds. */
const NOISE = new Set(['api', 'admin', 'v1', 'auth', 'platform', 'control-plane', 'lifecycle']);
/** Plural in form, one thing in meaning: never made singular, and a GET of one is `get`, not `list`. */
const UNCOUNTED = new Set(['claims', 'email-settings', 'jwks', 'options', 'standard-claims']);
/** A last path segment that is a verb: POST /…/users/{userId}/disable is disableTenantUser. */
const ACTIONS = new Set([
  'cancel',
  'confirm',
  'deactivate',
  'disable',
  'enable',
  'import',
  'offboard',
  'reactivate',
  'resolve',
  'restore',
  'resume',
  'retry',
  'send',
  'sign-out',
  'suspend',
  'verify',
]);
const VERBS: Record<string, string> = { get: 'get', post: 'create', put: 'update', patch: 'update', delete: 'delete' };

const words = (segment: string) =>
  segment
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1));
const singular = (word: string) =>
  word.endsWith('ies')
    ? `${word.slice(0, -3)}y`
    : word.endsWith('s') && !word.endsWith('ss')
      ? word.slice(0, -1)
      : word;

/**
 * The route's operationId: its declared one, else derived from method and path (docs/openapi.md):
 * the static segments, less the prefixes, each singular when a path parameter follows it
 * (an item of the collection), after a verb: `get` for an item or a singleton, `list` for a
 * GET collection (its last segment plural), `create` for a POST to a collection (singular),
 * `update` for PUT and PATCH, `delete`, or the action a last segment names.
 * GET /api/admin/tenants/{tenantId}/users → listTenantUsers; POST → createTenantUser.
 */
export function operationIdOf(r: Pick<DocumentedRoute, 'method' | 'path' | 'operationId'>): string {
  if (r.operationId) return r.operationId;
  const segments = r.path.split('/').filter((s) => s && !NOISE.has(s));
  const final = segments[segments.length - 1] ?? '';
  const action = r.method !== 'get' && ACTIONS.has(final) ? segments.pop()! : undefined;
  const item = segments[segments.length - 1]?.startsWith(':') ?? false;
  const nouns = segments.flatMap((s, i) => {
    if (s.startsWith(':')) return [];
    const w = words(s);
    // An item of the collection (a parameter follows), or the one a POST creates.
    const one = segments[i + 1]?.startsWith(':') || (!action && r.method === 'post' && i === segments.length - 1);
    if (one && !UNCOUNTED.has(s)) w[w.length - 1] = singular(w[w.length - 1]);
    return w;
  });
  const lastSegment = segments[segments.length - 1] ?? '';
  const plural = !item && !UNCOUNTED.has(lastSegment) && /[^s]s$/.test(lastSegment);
  const verb = action ? words(action).join('') : r.method === 'get' && plural ? 'list' : (VERBS[r.method] ?? r.method);
  return verb[0].toLowerCase() + verb.slice(1) + nouns.join('');
}

// ---- the document ----

/** The JSON Schema of a zod schema, without `$schema` (the document's dialect is OpenAPI 3.1's). */
const jsonSchema = (s: z.ZodType, io: 'input' | 'output'): Record<string, unknown> => {
  const { $schema: _dialect, ...js } = z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-2020-12' });
  return js;
};
const toSchema = (s: z.ZodType, io: 'input' | 'output') => (s === ErrorObject ? ERROR_REF : jsonSchema(s, io));

function response(status: string, resp: ResponseSpec): Record<string, unknown> {
  const type = resp.contentType ?? 'application/json';
  // An error answer declared without a schema is the error renderer's JSON error object.
  const schema = resp.schema
    ? toSchema(resp.schema, 'output')
    : Number(status) >= 400 && !resp.contentType
      ? ERROR_REF
      : type.startsWith('text/')
        ? { type: 'string' }
        : undefined;
  return {
    description: resp.description,
    ...(resp.headers
      ? {
          headers: Object.fromEntries(
            Object.entries(resp.headers).map(([name, description]) => [
              name,
              { description, schema: { type: 'string' } },
            ]),
          ),
        }
      : {}),
    ...(schema ? { content: { [type]: { schema } } } : resp.contentType ? { content: { [type]: {} } } : {}),
  };
}

function parametersOf(r: DocumentedRoute): unknown[] {
  const parameters: unknown[] = [];
  for (const [where, s] of [
    ['path', r.params],
    ['query', r.query],
  ] as const) {
    if (!s) continue;
    const js = toSchema(s, 'input') as { properties?: Record<string, unknown>; required?: string[] };
    for (const [name, prop] of Object.entries(js.properties ?? {}))
      parameters.push({
        name,
        in: where,
        required: where === 'path' || (js.required ?? []).includes(name),
        schema: prop,
      });
  }
  for (const h of r.headers ?? [])
    parameters.push({
      name: h.name,
      in: 'header',
      required: h.required ?? false,
      description: h.description,
      schema: toSchema(h.schema, 'input'),
    });
  return parameters;
}

function requestBodyOf(r: DocumentedRoute): Record<string, unknown> | undefined {
  if (r.body)
    return {
      required: true,
      content: {
        [r.bodyType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json']: {
          schema: toSchema(r.body, 'input'),
        },
      },
    };
  if (r.form)
    return { required: true, content: { 'application/x-www-form-urlencoded': { schema: toSchema(r.form, 'input') } } };
  return undefined;
}

/**
 * How the route authenticates, as OpenAPI security requirements. `basic` is client
 * authentication (RFC 6749 §2.3): HTTP Basic, or the client's fields in the form
 * (client_secret_post, private_key_jwt, or client_id alone for a public client), which no
 * security scheme can express, hence the empty alternative.
 */
function securityOf(r: DocumentedRoute): unknown[] {
  if (r.security === 'none') return [];
  if (r.security === 'optional-cookie') return [{ cookie: [] }, {}];
  if (r.security === 'basic') return [{ basic: [] }, {}];
  return [{ [r.security]: r.scopes ?? [] }];
}

export function openApiDocument(routes: DocumentedRoute[], issuer: string, version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const sharedResponses: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    if (r.document === false) continue;
    const parameters = parametersOf(r);
    const requestBody = requestBodyOf(r);
    const responses: Record<string, unknown> = {};
    for (const [status, resp] of Object.entries(r.responses)) {
      const built = response(status, resp);
      if (!resp.shared) {
        responses[status] = built;
        continue;
      }
      const known = sharedResponses[resp.shared];
      if (known && JSON.stringify(known) !== JSON.stringify(built))
        throw new Error(`${r.method.toUpperCase()} ${r.path}: the shared response ${resp.shared} differs`);
      sharedResponses[resp.shared] = built;
      responses[status] = { $ref: `#/components/responses/${resp.shared}` };
    }
    (paths[r.path.replace(/:([A-Za-z_]+)/g, '{$1}')] ??= {})[r.method] = {
      operationId: operationIdOf(r),
      summary: r.summary,
      tags: r.tags,
      ...(parameters.length ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses,
      security: securityOf(r),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Identity and Access Service',
      version,
      description:
        'Multi-tenant identity provider and OAuth 2.0 / OpenID Connect authorization server. ' +
        'Generated from the route declarations that also validate every request.',
      license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
    },
    servers: [{ url: issuer, description: 'The issuer (IAM_ISSUER)' }],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'An access token of this issuer (RFC 6750 §2.1: the Authorization header only)',
        },
        basic: {
          type: 'http',
          scheme: 'basic',
          description:
            'Client authentication, client_secret_basic (RFC 6749 §2.3.1). The token, revocation and ' +
            'introspection endpoints also take it in the form: client_secret_post, private_key_jwt ' +
            '(RFC 7523 §2.2), or client_id alone for a public client (not at /introspect).',
        },
        cookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'service_session',
          // RFC 6265bis §4.1.3.2; docs/security.md, "Proxies and cookies".
          description:
            'The browser session. On an https issuer the cookie is named __Host-service_session ' +
            '(Secure, Path=/, no Domain); service_session on an http issuer.',
        },
      },
      responses: sharedResponses,
      schemas: { Error: jsonSchema(ErrorObject, 'output') },
    },
  };
}
