/**
 * The outbound settings in shared/config.ts: loopback off by default, an extra CA file that
 * must hold a certificate, and the ID-JAG key refetch cooldown.
 */
import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../shared/config.js';
import { makeCert } from '../helpers/https-issuer.js';

const dir = mkdtempSync(join(tmpdir(), 'iam-outbound-cfg-'));
test.after.always(() => rmSync(dir, { recursive: true, force: true }));
const base = { IAM_DATABASE_URL: `sqlite:${join(dir, 'iam.db')}`, IAM_SECRET_KEY: 'x'.repeat(40) };

test('defaults: no loopback, no extra CA, 30 s cooldown', (t) => {
  const c = loadConfig(base);
  t.false(c.outboundAllowLoopback);
  t.is(c.outboundCaFile, undefined);
  t.is(c.outboundCaPem, undefined);
  t.is(c.idJagJwksCooldownSeconds, 30);
});

test('the settings are read and validated, naming the variable', (t) => {
  t.true(loadConfig({ ...base, IAM_OUTBOUND_ALLOW_LOOPBACK: 'true' }).outboundAllowLoopback);
  t.true(loadConfig({ ...base, IAM_OUTBOUND_ALLOW_LOOPBACK: '1' }).outboundAllowLoopback);
  t.false(loadConfig({ ...base, IAM_OUTBOUND_ALLOW_LOOPBACK: 'false' }).outboundAllowLoopback);
  t.is(loadConfig({ ...base, IAM_IDJAG_JWKS_COOLDOWN_SECONDS: '0' }).idJagJwksCooldownSeconds, 0);
  const bad = (env: Record<string, string>, variable: string, re: RegExp) => {
    const e = t.throws(() => loadConfig({ ...base, ...env }), { instanceOf: ConfigError });
    t.is(e.variable, variable);
    t.regex(e.message, re);
  };
  bad({ IAM_OUTBOUND_ALLOW_LOOPBACK: 'maybe' }, 'IAM_OUTBOUND_ALLOW_LOOPBACK', /true or false/);
  bad({ IAM_IDJAG_JWKS_COOLDOWN_SECONDS: '3601' }, 'IAM_IDJAG_JWKS_COOLDOWN_SECONDS', /between 0 and 3600/);
  bad({ IAM_OUTBOUND_CA_FILE: join(dir, 'missing.pem') }, 'IAM_OUTBOUND_CA_FILE', /cannot read/);
  writeFileSync(join(dir, 'junk.pem'), 'not a certificate');
  bad({ IAM_OUTBOUND_CA_FILE: join(dir, 'junk.pem') }, 'IAM_OUTBOUND_CA_FILE', /no PEM certificate/);
  writeFileSync(join(dir, 'broken.pem'), '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
  bad({ IAM_OUTBOUND_CA_FILE: join(dir, 'broken.pem') }, 'IAM_OUTBOUND_CA_FILE', /not a valid PEM certificate/);
});

test('a CA file with a certificate is loaded', (t) => {
  const cert = makeCert();
  t.teardown(() => rmSync(cert.dir, { recursive: true, force: true }));
  const c = loadConfig({ ...base, IAM_OUTBOUND_CA_FILE: cert.certFile });
  t.is(c.outboundCaFile, cert.certFile);
  t.is(c.outboundCaPem, cert.cert);
});
