/**
 * The FAPI 2.0 profile switch (docs/fapi.md), as the admin API takes it: a tenant's `fapi`
 * settings section, and a client's own `fapi_profile` (null: its tenant's).
 */
import { z } from 'zod';

/**
 * `off`; `fapi2-security`: the FAPI 2.0 Security Profile (final) §5; `fapi2-message-signing`:
 * the Security Profile plus the Message Signing profile's signed requests (JAR) and signed
 * authorization responses (JARM).
 */
export const FAPI_PROFILES = ['off', 'fapi2-security', 'fapi2-message-signing'] as const;
export type FapiProfile = (typeof FAPI_PROFILES)[number];

export const FapiProfileField = z.enum(FAPI_PROFILES, {
  error: `must be one of ${FAPI_PROFILES.join(', ')}`,
});

export const FapiPolicyInput = z
  .strictObject({
    profile: FapiProfileField.describe(
      "The tenant's FAPI 2.0 profile: off, fapi2-security or fapi2-message-signing (docs/fapi.md)",
    ),
  })
  .describe("A tenant's FAPI 2.0 profile; a client's own fapi_profile overrides it");
export type FapiPolicyInput = z.output<typeof FapiPolicyInput>;

export const FapiPolicyView = z.looseObject({
  tenantId: z.string(),
  policy: FapiPolicyInput.describe('The profile as stored (off when never set)'),
});
