/* eslint-disable max-len -- SAML metadata fixtures read best with one element per line */
/**
 * The streaming verifier (shared/services/federation/metadata/stream-verify.ts): its exclusive
 * c14n must equal xml-crypto's on what SAML metadata contains (documents signed by xml-crypto
 * verify here only if the digests agree), including namespaces declared and undeclared at
 * several levels, attribute escapes, CDATA and comments; and the refusals that do not need a
 * server. (Processing instructions inside the root are left out of the comparison: C14N 1.0
 * §2.3 renders them as `<?target data?>`, which we do, while xml-crypto 6 renders only their
 * data; signers such as xmlsec and Santuario follow the specification.)
 */
import test from 'ava';
import { SignedXml } from 'xml-crypto';
import { verifyMetadataString } from '../../shared/services/federation/metadata/stream-verify.js';
import { aggregateXml, makeSigner, manyEntities, signXml } from '../helpers/federation-metadata.js';

const signer = makeSigner();

const tricky = `<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment before the root -->
<md:EntitiesDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:unused="urn:x:unused" ID="_t1" validUntil="2099-01-01T00:00:00Z">
  <md:Extensions xmlns="urn:x:default"><plain a="1&#9;tab" b='q"uote &amp; &lt;' c="line&#10;feed">text &amp; &lt; &gt; ]]&gt;<![CDATA[<cdata & stuff>]]><!-- gone --></plain><inner xmlns=""><deeper xmlns:p="urn:x:p" p:z="2" a="3" xml:lang="en">é ü 𝄞</deeper></inner></md:Extensions>
  <md:EntityDescriptor entityID="https://sp.example.org/sp" xmlns:mdui="urn:oasis:names:tc:SAML:metadata:ui">
    <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol"><md:Extensions><mdui:UIInfo><mdui:DisplayName xml:lang="en">S&amp;P</mdui:DisplayName></mdui:UIInfo></md:Extensions>
      <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp.example.org/acs" index="0"/>
    </md:SPSSODescriptor>
  </md:EntityDescriptor>
</md:EntitiesDescriptor>
`;

test('exclusive c14n agrees with xml-crypto on namespaces, escapes, CDATA and comments', (t) => {
  const signed = signXml(tricky, signer);
  const r = verifyMetadataString(signed, [signer.certPem]);
  t.is(r.fingerprint, signer.fingerprint);
  t.deepEqual(
    r.inventory.entities.map((e) => [e.entityId, e.roles]),
    [['https://sp.example.org/sp', ['saml_sp']]],
  );
  // And xml-crypto agrees the document verifies (the same key, its own DOM canonicalizer).
  const check = new SignedXml({ publicCert: signer.certPem, getCertFromKeyInfo: () => null });
  const sigNode = /<ds:Signature[\s\S]*<\/ds:Signature>/
    .exec(signed)![0]
    .replace('<ds:Signature', '<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"');
  check.loadSignature(
    sigNode.replace(/xmlns:ds="[^"]*" xmlns:ds="[^"]*"/, 'xmlns:ds="http://www.w3.org/2000/09/xmldsig#"'),
  );
  t.true(check.checkSignature(signed));
});

test('a generated aggregate verifies, CRLF line ends and a BOM included', (t) => {
  const signed = signXml(aggregateXml({ entities: manyEntities(40) }), signer);
  t.is(verifyMetadataString(signed, [signer.certPem]).inventory.entities.length, 40);
  // The parser normalises CRLF to LF before c14n (XML 1.0 §2.11), so a CRLF copy verifies too.
  t.is(verifyMetadataString(`\ufeff${signed.replace(/\n/g, '\r\n')}`, [signer.certPem]).inventory.entities.length, 40);
});

test('refusals: unsigned, not metadata, no pinned certificate, SHA-1, KeyInfo never trusted', (t) => {
  const unsigned = aggregateXml({ entities: manyEntities(2) });
  t.throws(() => verifyMetadataString(unsigned, [signer.certPem]), { message: /not signed/ });
  t.throws(() => verifyMetadataString('<a ID="x"/>', [signer.certPem]), { message: /root/ });
  t.throws(() => verifyMetadataString(signXml(unsigned, signer), []), { message: /no pinned/ });
  // A SHA-1 signature with a valid digest is refused by algorithm, whoever signed it.
  const sha1 = new SignedXml({
    privateKey: signer.keyPem,
    publicCert: signer.certPem,
    canonicalizationAlgorithm: 'http://www.w3.org/2001/10/xml-exc-c14n#',
    signatureAlgorithm: 'http://www.w3.org/2000/09/xmldsig#rsa-sha1',
  });
  sha1.addReference({
    xpath: '/*',
    transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
    digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
  });
  sha1.computeSignature(unsigned, { prefix: 'ds', location: { reference: '/*', action: 'prepend' } });
  t.throws(() => verifyMetadataString(sha1.getSignedXml(), [signer.certPem]), { message: /algorithm/ });
  // Signed by a key that is not pinned but named in KeyInfo: refused, reported as a key change.
  const other = makeSigner();
  const e = t.throws<Error & { code: string; details: Record<string, unknown> }>(() =>
    verifyMetadataString(signXml(unsigned, other), [signer.certPem]),
  );
  t.is(e.code, 'metadata_signing_key_changed');
  t.is(e.details.newFingerprint, other.fingerprint);
});
