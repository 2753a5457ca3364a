/**
 * The structure of /openapi.json that client generators and the Redocly lint rely on
 * (docs/openapi.md), checked on the document built in-process as `npm run lint:openapi` builds
 * it (daemon/openapi-file.ts; openapi-headers.test.ts checks that the daemon serves the same):
 * unique operationIds, one Error component referenced by every error answer, the OAuth
 * endpoints' form bodies, and the routes that were once left out.
 */
import test from 'ava';
import Router from '@koa/router';
import { ApiRegistry } from '../../daemon/openapi.js';
import { operationIdOf } from '../../daemon/openapi-document.js';
import { openApiDocumentOf } from '../../daemon/openapi-file.js';

interface Schema {
  $ref?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  oneOf?: Schema[];
  const?: string;
}
interface Operation {
  operationId?: string;
  requestBody?: { required?: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { $ref?: string; content?: Record<string, { schema?: Schema }> }>;
  security?: Record<string, string[]>[];
}
interface Doc {
  info: { license?: { name: string; url?: string } };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; responses: Record<string, Operation['responses'][string]> };
}

const doc = openApiDocumentOf({ IAM_ISSUER: 'https://iam.test' }) as unknown as Doc;
const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
  Object.entries(ops).map(([method, op]) => ({ where: `${method.toUpperCase()} ${path}`, op })),
);

test('every operation has an operationId: present, camelCase and unique', (t) => {
  t.true(operations.length > 120, 'the operations were found');
  const missing = operations.filter(({ op }) => !op.operationId).map((o) => o.where);
  t.deepEqual(missing, []);
  const ids = operations.map(({ op }) => op.operationId!);
  t.deepEqual(
    ids.filter((id) => !/^[a-z][A-Za-z0-9]*$/.test(id)),
    [],
  );
  t.deepEqual(
    ids.filter((id, i) => ids.indexOf(id) !== i),
    [],
  );
  // Derived from method and path, or declared where that reads poorly.
  t.is(doc.paths['/api/admin/tenants/{tenantId}/users'].get.operationId, 'listTenantUsers');
  t.is(doc.paths['/api/admin/tenants/{tenantId}/users'].post.operationId, 'createTenantUser');
  t.is(doc.paths['/api/admin/tenants/{tenantId}/users/{userId}'].get.operationId, 'getTenantUser');
  t.is(doc.paths['/api/admin/tenants/{tenantId}/users/{userId}/disable'].post.operationId, 'disableTenantUser');
  t.is(doc.paths['/token'].post.operationId, 'createToken');
  t.is(doc.paths['/introspect'].post.operationId, 'introspectToken');
});

test('a second route with the same operationId is refused when the application is built', (t) => {
  const api = new ApiRegistry();
  const route = { summary: 'x', tags: [] as string[], security: 'none' as const, responses: {} };
  api.add(new Router(), { ...route, method: 'get', path: '/things/:id' }, () => {});
  t.is(operationIdOf({ method: 'get', path: '/things/:id' }), 'getThing');
  t.throws(() => api.add(new Router(), { ...route, method: 'get', path: '/things/:thingId' }, () => {}), {
    message: /operationId getThing is GET \/things\/:id's already/,
  });
  t.notThrows(() =>
    api.add(
      new Router(),
      { ...route, method: 'get', path: '/things/:thingId', operationId: 'getOtherThing' },
      () => {},
    ),
  );
});

test('one Error component, referenced by every error answer; no inline copy of it remains', (t) => {
  const error = doc.components.schemas.Error;
  t.deepEqual(Object.keys(error.properties ?? {}).sort(), [
    'error',
    'error_code',
    'error_description',
    'error_id',
    'message',
    'webauthn_signal',
  ]);
  const ref = '#/components/schemas/Error';
  const resolve = (r: Operation['responses'][string]) =>
    r.$ref ? doc.components.responses[r.$ref.replace('#/components/responses/', '')] : r;
  const wrong: string[] = [];
  let errors = 0;
  for (const { where, op } of operations)
    for (const [status, r] of Object.entries(op.responses)) {
      const json = resolve(r)?.content?.['application/json'];
      if (Number(status) < 400 || !json) continue;
      errors++;
      // /readyz's 503 is its status report, not an error object.
      if (json.schema?.$ref !== ref && where !== 'GET /readyz') wrong.push(`${where} ${status}`);
    }
  t.true(errors > 400, 'the error answers were found');
  t.deepEqual(wrong, []);
  // Anywhere in the document but the component itself: no object schema with the error fields.
  const inline: string[] = [];
  const walk = (node: unknown, at: string) => {
    if (!node || typeof node !== 'object') return;
    const props = (node as Schema).properties;
    if (props && 'error' in props && 'error_description' in props && at !== '/components/schemas/Error')
      inline.push(at);
    for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k}`);
  };
  walk(doc, '');
  t.deepEqual(inline, []);
  // The admin API's authentication answers are one shared response each.
  t.is(doc.paths['/api/admin/tenants'].get.responses['401'].$ref, '#/components/responses/Unauthorized');
});

test('/token, /revoke and /introspect document their form bodies, client authentication included', (t) => {
  const form = (path: string) => {
    const body = doc.paths[path].post.requestBody;
    t.true(body?.required, `${path}: the body is required`);
    return body!.content['application/x-www-form-urlencoded'].schema;
  };
  const grants = form('/token').oneOf ?? [];
  t.deepEqual(
    grants.map((g) => g.properties?.grant_type.const),
    ['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:token-exchange'],
  );
  const required = (grant: string) => grants.find((g) => g.properties?.grant_type.const === grant)?.required;
  t.deepEqual(required('authorization_code'), ['grant_type', 'code']); // RFC 6749 §4.1.3
  t.deepEqual(required('refresh_token'), ['grant_type', 'refresh_token']); // RFC 6749 §6
  t.deepEqual(required('urn:ietf:params:oauth:grant-type:token-exchange'), [
    'grant_type',
    'subject_token',
    'subject_token_type',
  ]); // RFC 8693 §2.1
  t.truthy(grants.find((g) => g.properties?.grant_type.const === 'authorization_code')?.properties?.code_verifier);
  for (const path of ['/revoke', '/introspect']) {
    const s = form(path);
    t.deepEqual(s.required, ['token'], `${path}: RFC 7009 §2.1, RFC 7662 §2.1`);
    t.truthy(s.properties?.token_type_hint);
  }
  for (const s of [...grants, form('/revoke'), form('/introspect')])
    for (const field of ['client_id', 'client_secret', 'client_assertion_type', 'client_assertion'])
      t.truthy(s.properties?.[field], field);
  // Basic, or the client's credentials in the form (the empty alternative).
  t.deepEqual(doc.paths['/token'].post.security, [{ basic: [] }, {}]);
});

test('the routes once left out are listed, and the license is named', (t) => {
  t.truthy(doc.paths['/.well-known/oauth-authorization-server']?.get, 'RFC 8414 §3 metadata');
  t.deepEqual(doc.paths['/userinfo']?.post?.security, [{ bearer: ['openid'] }], 'OIDC Core §5.3.1 POST');
  t.truthy(doc.paths['/logout']?.post?.requestBody?.content['application/x-www-form-urlencoded']);
  t.deepEqual(doc.info.license, { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' });
});
