/**
 * Pure rules of trust sources: metadataUrlPatterns matching (a `*` stays inside one path
 * segment, `**` crosses segments, the rest is literal) and certificate pinning (PEM parsed,
 * SHA-256 of the DER).
 */
import test from 'ava';
import { createHash, X509Certificate } from 'node:crypto';
import { rmSync } from 'node:fs';
import { pinCertificate, urlMatchesPatterns } from '../../shared/services/federation/trust-sources.js';
import { makeCert } from '../helpers/https-issuer.js';

test('metadataUrlPatterns: * within a segment, ** across, dots and the host literal', (t) => {
  const p = ['https://mds.example.org/*.xml'];
  t.true(urlMatchesPatterns('https://mds.example.org/aggregate.xml', p));
  t.false(urlMatchesPatterns('https://mds.example.org/a/b.xml', p));
  t.false(urlMatchesPatterns('https://mds.example.org.evil.net/aggregate.xml', p));
  t.false(urlMatchesPatterns('https://mdsXexample.org/aggregate.xml', p));
  t.false(urlMatchesPatterns('https://mds.example.org/aggregate.xml?x=1', p));
  t.true(urlMatchesPatterns('https://mds.example.org/a/b/c.xml', ['https://mds.example.org/**']));
  t.false(urlMatchesPatterns('https://mds.example.org/a', []));
});

test('pinCertificate: sha256 of the DER, subject and notAfter; refuses what is not one certificate', (t) => {
  const cert = makeCert();
  t.teardown(() => rmSync(cert.dir, { recursive: true, force: true }));
  const pinned = pinCertificate(`\n${cert.cert}\n`, 'body.certificates.0');
  t.is(pinned.sha256, createHash('sha256').update(new X509Certificate(cert.cert).raw).digest('hex'));
  t.regex(pinned.subject!, /CN=iam-test-issuer/);
  t.false(Number.isNaN(Date.parse(pinned.notAfter!)));
  t.throws(() => pinCertificate(cert.key, 'body.certificates.1'), { message: /^body\.certificates\.1: / });
  t.throws(() => pinCertificate(cert.cert + cert.cert, 'body.certificates.2'), { message: /^body\.certificates\.2: / });
});
