/**
 * XML-DSig verification of a SAML metadata document against pinned certificates only, with
 * xml-crypto (v6) over @xmldom/xmldom (v0.9). Runs inside the verification worker
 * (./worker.ts), never on the daemon's event loop.
 *
 * What makes it safe to trust the result:
 * - scanStructure (saxes, before any DOM) refuses a DOCTYPE, more than one Signature, a
 *   Signature anywhere but as the root's child, a Reference to anything but the root's ID, and
 *   transforms other than enveloped-signature + exclusive c14n;
 * - the key is never taken from the document: `getCertFromKeyInfo` returns null, and the
 *   signature algorithms registered here ignore the key xml-crypto hands them and try each
 *   pinned certificate in turn, recording which one verified;
 * - only RSA-SHA256/512 and ECDSA-SHA256/384/512 signatures, SHA-256/512 digests and
 *   exclusive c14n are registered (no SHA-1, no HMAC, no inclusive c14n);
 * - afterwards only `getSignedReferences()` is read: the canonical XML the digest covered.
 */
import { createHash, verify as cryptoVerify, X509Certificate, type KeyObject } from 'node:crypto';
import { SignedXml } from 'xml-crypto';
import { MetadataError, scanInventory, scanStructure, type Inventory } from './scan.js';

export interface VerifyInput {
  xml: string;
  /** Pinned signing certificates, PEM. */
  pinnedPem: string[];
}

export interface VerifyResult {
  /** SHA-256 (hex) of the pinned certificate that verified. */
  fingerprint: string;
  inventory: Inventory;
}

export function certFingerprint(pemOrDer: string | Buffer): string {
  const cert = new X509Certificate(pemOrDer);
  return createHash('sha256').update(cert.raw).digest('hex');
}

const SIG_ALGS: Record<string, { hash: string; ecdsa: boolean }> = {
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256': { hash: 'sha256', ecdsa: false },
  'http://www.w3.org/2001/04/xmldsig-more#rsa-sha512': { hash: 'sha512', ecdsa: false },
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256': { hash: 'sha256', ecdsa: true },
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384': { hash: 'sha384', ecdsa: true },
  'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha512': { hash: 'sha512', ecdsa: true },
};

interface Pinned {
  key: KeyObject;
  fingerprint: string;
}

/** Verifies `material` with each key; the fingerprint of the first that verifies, or undefined. */
function tryKeys(alg: string, material: string, signatureB64: string, keys: Pinned[]): string | undefined {
  const a = SIG_ALGS[alg];
  const sig = Buffer.from(signatureB64, 'base64');
  for (const k of keys) {
    const isEc = k.key.asymmetricKeyType === 'ec';
    if (isEc !== a.ecdsa) continue;
    try {
      // XML-DSig 1.1 §6.4.3: an ECDSA SignatureValue is r || s, not DER.
      const ok = cryptoVerify(a.hash, Buffer.from(material), isEc ? { key: k.key, dsaEncoding: 'ieee-p1363' } : k.key, sig);
      if (ok) return k.fingerprint;
    } catch {
      /* a malformed value for this key type: try the next key */
    }
  }
  return undefined;
}

export function verifyMetadata(input: VerifyInput): VerifyResult {
  if (!input.pinnedPem.length)
    throw new MetadataError('metadata_no_pinned_certificate', 'the trust source has no pinned signing certificate');
  const structure = scanStructure(input.xml);
  const pinned: Pinned[] = input.pinnedPem.map((pem) => {
    const cert = new X509Certificate(pem);
    return { key: cert.publicKey, fingerprint: createHash('sha256').update(cert.raw).digest('hex') };
  });
  let verifiedBy: string | undefined;
  let attempted: { alg: string; material: string; value: string } | undefined;
  const sig = new SignedXml({
    publicCert: input.pinnedPem[0],
    // Never a key from the document's KeyInfo (the attacker's choice of key).
    getCertFromKeyInfo: () => null,
  });
  sig.CanonicalizationAlgorithms = {
    'http://www.w3.org/2001/10/xml-exc-c14n#': sig.CanonicalizationAlgorithms['http://www.w3.org/2001/10/xml-exc-c14n#'],
    'http://www.w3.org/2000/09/xmldsig#enveloped-signature':
      sig.CanonicalizationAlgorithms['http://www.w3.org/2000/09/xmldsig#enveloped-signature'],
  } as typeof sig.CanonicalizationAlgorithms;
  sig.HashAlgorithms = {
    'http://www.w3.org/2001/04/xmlenc#sha256': sig.HashAlgorithms['http://www.w3.org/2001/04/xmlenc#sha256'],
    'http://www.w3.org/2001/04/xmlenc#sha512': sig.HashAlgorithms['http://www.w3.org/2001/04/xmlenc#sha512'],
  } as typeof sig.HashAlgorithms;
  const algs: Record<string, new () => unknown> = {};
  for (const uri of Object.keys(SIG_ALGS)) {
    algs[uri] = class {
      getAlgorithmName() {
        return uri;
      }
      getSignature(): string {
        throw new Error('verification only');
      }
      verifySignature(material: string, _key: unknown, signatureValue: string): boolean {
        attempted = { alg: uri, material, value: signatureValue };
        verifiedBy = tryKeys(uri, material, signatureValue, pinned);
        return verifiedBy !== undefined;
      }
    };
  }
  sig.SignatureAlgorithms = algs as unknown as typeof sig.SignatureAlgorithms;
  try {
    sig.loadSignature(structure.signatureXml);
  } catch (e) {
    throw new MetadataError('metadata_signature_structure', `the Signature could not be read: ${(e as Error).message.slice(0, 200)}`);
  }
  let valid = false;
  let failure: Error | undefined;
  try {
    valid = sig.checkSignature(input.xml);
  } catch (e) {
    failure = e as Error;
  }
  if (!valid || !verifiedBy) {
    const msg = failure?.message ?? '';
    if (/algorithm/i.test(msg) && !/invalid signature/.test(msg))
      throw new MetadataError('metadata_algorithm', 'the signature uses an algorithm that is not accepted');
    if (/multiple elements with the same value for the ID/.test(msg))
      throw new MetadataError('metadata_signature_structure', 'the signed ID appears more than once');
    // The digests matched but no pinned key verifies: if the key the document names does, the
    // publisher rolled its signing key; an operator must pin the new certificate.
    const digestsOk = /invalid signature: the signature value/.test(msg);
    if (digestsOk && structure.keyInfoCertB64 && attempted) {
      let fp: string | undefined;
      try {
        const cert = new X509Certificate(Buffer.from(structure.keyInfoCertB64, 'base64'));
        const candidate: Pinned = { key: cert.publicKey, fingerprint: createHash('sha256').update(cert.raw).digest('hex') };
        fp = tryKeys(attempted.alg, attempted.material, attempted.value, [candidate]);
      } catch {
        fp = undefined;
      }
      if (fp)
        throw new MetadataError('metadata_signing_key_changed', 'the metadata is signed by a key that is not pinned', {
          newFingerprint: fp,
        });
    }
    throw new MetadataError('metadata_signature_invalid', 'the metadata signature does not verify with a pinned certificate');
  }
  const signed = sig.getSignedReferences();
  if (signed.length !== 1) throw new MetadataError('metadata_signature_structure', 'expected one signed reference');
  return { fingerprint: verifiedBy, inventory: scanInventory(signed[0]) };
}
