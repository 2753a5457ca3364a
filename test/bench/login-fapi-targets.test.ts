/**
 * The FAPI login bench's two targets (bench/login-fapi.ts), asserted on what they do, never on
 * how fast: one whole login each with a push, private_key_jwt and a DPoP-bound token (the
 * targets throw unless the token comes back with token_type DPoP), and each server set up so
 * that a plain authorization request, without the push, is refused: the work measured is the
 * FAPI flow's and could not silently fall back to the plain one.
 */
import test from 'ava';
import { fapiClientKey } from '../../bench/lib/fapi-client.js';
import { OUR_FAPI_STEPS, prepareOurLogin, REDIRECT } from '../../bench/lib/our-login.js';
import { PEER_FAPI, PEER_REDIRECT } from '../../bench/lib/peer.js';
import { PEER_FAPI_STEPS, startPeerLogin } from '../../bench/login-peer.js';

const plain = (clientId: string, redirectUri: string) =>
  new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: 'openid email',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGjSstw-cM',
    code_challenge_method: 'S256',
  });

test('node-oidc-provider under FAPI 2.0: a pushed, DPoP-bound login; a plain request refused', async (t) => {
  const peer = await startPeerLogin(1, { fapi: await fapiClientKey() });
  t.teardown(() => peer.stop());
  t.is((await peer.login(0)).length, PEER_FAPI_STEPS.length + 1);
  const res = await fetch(`${peer.url}/auth?${plain(PEER_FAPI.id, PEER_REDIRECT)}`, { redirect: 'manual' });
  t.regex(`${res.headers.get('location')} ${await res.text()}`, /invalid_request/);
});

test('ours, PAR required and DPoP required: a pushed, DPoP-bound login; a plain request refused', async (t) => {
  const setup = await prepareOurLogin({ concurrency: 1, fapi: await fapiClientKey() });
  const ours = await setup.start();
  t.teardown(async () => {
    await ours.stop();
    await setup.close();
  });
  t.is((await ours.login(0)).length, OUR_FAPI_STEPS.length + 1);
  t.is(setup.mailsReceived(), 1);
  const res = await fetch(`${ours.url}/authorize?${plain(setup.clientId, REDIRECT)}`, { redirect: 'manual' });
  t.is(res.status, 302);
  t.is(new URL(res.headers.get('location')!).searchParams.get('error'), 'invalid_request');
});
