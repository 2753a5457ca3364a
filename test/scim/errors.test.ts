/**
 * SCIM errors (RFC 7644 §3.12): each refusal answers the SCIM error object with the right
 * status and scimType, and writes nothing.
 */
import test from 'ava';
import { SCIM_ERROR, startScim, type ScimEnv } from '../helpers/scim.js';

let e: ScimEnv;
test.before(async () => {
  e = await startScim();
});
test.after.always(async () => {
  await e?.stop();
});

test('discovery answers in application/scim+json', async (t) => {
  const r = await e.scim('GET', '/ServiceProviderConfig');
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type') ?? '', /application\/scim\+json/);
  t.true(r.body.patch.supported);
  const s = await e.scim('GET', '/Schemas');
  t.is(s.body.totalResults, 3);
  const rt = await e.scim('GET', '/ResourceTypes');
  t.deepEqual(
    rt.body.Resources.map((x: { id: string }) => x.id),
    ['User', 'Group'],
  );
  const nf = await e.scim('GET', '/Nope');
  t.is(nf.status, 404);
  t.deepEqual(nf.body.schemas, [SCIM_ERROR]);
});
