/** DPoP (RFC 9449): the proof check, the server nonces and the tenant's policy (docs/dpop.md). */
export { DpopNonces, DPOP_NONCE_WINDOW_S, dpopNonce } from './nonce.js';
export {
  accessTokenHash,
  DPOP_ALGORITHMS,
  DPOP_IAT_WINDOW_S,
  DpopProofError,
  isJkt,
  verifyProof,
  type VerifiedProof,
} from './proof.js';
export { DpopService, dpopPolicyOf, type DpopPolicyView, type StoredDpopPolicy } from './service.js';
