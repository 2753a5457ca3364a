/**
 * The operator's side of SCIM: a long-lived token issued and revoked by the CLI (the token an
 * IdP stores), and the tenant setting that makes DELETE deactivate instead of erase, set by
 * the CLI and read and refused through the admin API.
 */
import test from 'ava';
import { api } from '../helpers/api.js';
import { iam } from '../helpers/cli.js';
import { SCIM_USER, startScim, type ScimEnv } from '../helpers/scim.js';

let e: ScimEnv;

/** `iam … --json` with the daemon's issuer, as an operator runs it beside that daemon (IAM_ISSUER). */
async function iamJson(args: string[]): Promise<any> {
  const r = await iam(e.db, [...args, '--json'], { IAM_ISSUER: e.d.url });
  if (r.code !== 0) throw new Error(`iam ${args.join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout);
}

test.before(async () => {
  e = await startScim();
});
test.after.always(async () => {
  await e?.stop();
});

test.serial(
  'iam scim token create issues a long-lived token; revoke ends it at once; a client without scim is refused',
  async (t) => {
    const issued = await iamJson([
      'scim',
      'token',
      'create',
      '--tenant',
      e.tenantId,
      '--client',
      e.idpClientId,
      '--days',
      '30',
      '--json',
    ]);
    t.is(issued.scope, 'scim');
    const days = (Date.parse(issued.expires_at) - Date.now()) / 86_400_000;
    t.true(days > 29.9 && days <= 30, `valid for ${days} days`);
    const use = () => api(e.d.url, 'GET', '/scim/v2/Users', { token: issued.access_token });
    const first = await use();
    t.is(first.status, 200, first.text);

    t.like(await iamJson(['scim', 'token', 'revoke', '--tenant', e.tenantId, '--jti', issued.jti]), {
      jti: issued.jti,
      revoked: true,
    });
    const refused = await use();
    t.is(refused.status, 401);
    t.is(refused.body.status, '401');
    t.regex(refused.headers.get('www-authenticate') ?? '', /invalid_token/);
    // The short-lived token of the same client still works: only that jti was revoked.
    t.is((await e.scim('GET', '/Users')).status, 200);

    const wrong = await iam(e.db, [
      'scim',
      'token',
      'create',
      '--tenant',
      e.tenantId,
      '--client',
      e.adminClientId,
      '--json',
    ]);
    t.is(wrong.code, 1);
    t.regex(wrong.stdout + wrong.stderr, /scim/);
  },
);

test.serial(
  'scim_delete: deactivate makes DELETE disable the user; the admin API reads and checks the setting',
  async (t) => {
    const path = `/api/admin/tenants/${e.tenantId}/scim-settings`;
    t.deepEqual((await api(e.d.url, 'GET', path, { token: e.adminToken })).body, { scim_delete: 'erase' });
    await iamJson(['scim', 'settings', 'set', '--tenant', e.tenantId, '--delete', 'deactivate']);
    t.deepEqual((await api(e.d.url, 'GET', path, { token: e.adminToken })).body, { scim_delete: 'deactivate' });
    const bad = await api(e.d.url, 'PUT', path, { token: e.adminToken, body: { scim_delete: 'shred' } });
    t.is(bad.status, 400);
    // The SCIM client's token does not reach the admin API's settings.
    t.is((await api(e.d.url, 'GET', path, { token: e.token })).status, 403);

    const created = await e.scim('POST', '/Users', { schemas: [SCIM_USER], userName: 'leaver@example.com' });
    t.is(created.status, 201);
    t.is((await e.scim('DELETE', `/Users/${created.body.id}`)).status, 204);
    const after = await e.scim('GET', `/Users/${created.body.id}`);
    t.is(after.status, 200);
    t.false(after.body.active);
  },
);
