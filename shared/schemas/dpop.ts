/**
 * A tenant's DPoP policy (RFC 9449, docs/dpop.md), as the admin API takes it: whether proofs
 * must carry a nonce this server provided (§8, §9), and whether every token request of the
 * tenant's clients must carry a proof (every access token sender-constrained).
 */
import { z } from 'zod';

export const DpopPolicyInput = z
  .strictObject({
    requireNonce: z
      .boolean()
      .optional()
      .describe('Proofs must carry a DPoP-Nonce this server provided (RFC 9449 §8, §9); left out: false'),
    requireDpop: z
      .boolean()
      .optional()
      .describe("Every token request of the tenant's clients must carry a DPoP proof; left out: false"),
  })
  .describe("A tenant's DPoP policy; PUT replaces it whole (a field left out is cleared)");

export type DpopPolicyInput = z.output<typeof DpopPolicyInput>;

export const DpopPolicyView = z.looseObject({
  tenantId: z.string(),
  policy: DpopPolicyInput.describe('The policy as stored (only the fields set)'),
  effective: z
    .looseObject({ requireNonce: z.boolean(), requireDpop: z.boolean() })
    .describe('What applies to the tenant'),
});
