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

const MD = 'urn:oasis:names:tc:SAML:2.0:metadata';
/** A metadata root with `depth - 1` nested md:Extensions inside it (depth counts the root). */
const nested = (depth: number) =>
  `<md:EntitiesDescriptor xmlns:md="${MD}" ID="_deep">${'<md:Extensions>'.repeat(depth - 1)}` +
  `${'</md:Extensions>'.repeat(depth - 1)}</md:EntitiesDescriptor>`;
const codeOf = (f: () => unknown): string | undefined => {
  try {
    f();
    return undefined;
  } catch (e) {
    return (e as { code?: string }).code;
  }
};

test('element depth is capped at 256: a document 300 deep is refused with metadata_too_deep', (t) => {
  t.is(
    codeOf(() => verifyMetadataString(nested(300), [signer.certPem])),
    'metadata_too_deep',
  );
  // 256 deep is read to the end (and refused for what it lacks, a signature).
  t.is(
    codeOf(() => verifyMetadataString(nested(256), [signer.certPem])),
    'metadata_unsigned',
  );
});

test('a document 100,000 elements deep is refused with metadata_too_deep, not parsed to its depth', (t) => {
  t.is(
    codeOf(() => verifyMetadataString(nested(100_000), [signer.certPem])),
    'metadata_too_deep',
  );
});

test('namespaces are scoped to their element, and namespace errors are refused as not well-formed', (t) => {
  const root = (inner: string) => `<md:EntitiesDescriptor xmlns:md="${MD}" ID="_ns">${inner}</md:EntitiesDescriptor>`;
  const code = (inner: string) => codeOf(() => verifyMetadataString(root(inner), [signer.certPem]));
  // Well-formed, bindings in and out of scope: read to the end (unsigned).
  t.is(code('<a:x xmlns:a="urn:a"><a:y xmlns:a="urn:b" a:k="1"/></a:x><b:x xmlns:b="urn:a"/>'), 'metadata_unsigned');
  t.is(code('<x xmlns="urn:d"><y xmlns=""/></x>'), 'metadata_unsigned');
  // A prefix declared on a sibling is out of scope after it closes.
  t.is(code('<a:x xmlns:a="urn:a"/><a:y/>'), 'metadata_xml');
  t.is(code('<x p:k="1"/>'), 'metadata_xml');
  // Two attributes with one expanded name (xml-names §6.3).
  t.is(code('<x xmlns:p="urn:a" xmlns:q="urn:a" p:k="1" q:k="2"/>'), 'metadata_xml');
  // Undeclaring a prefix (XML 1.0), the reserved prefixes and names.
  t.is(code('<x xmlns:p=""/>'), 'metadata_xml');
  t.is(code('<x xmlns:xml="urn:not-xml"/>'), 'metadata_xml');
  t.is(code('<x xmlns:p="http://www.w3.org/2000/xmlns/"/>'), 'metadata_xml');
  t.is(code('<xmlns:x/>'), 'metadata_xml');
  t.is(code('<a:b:c xmlns:a="urn:a"/>'), 'metadata_xml');
});
