/** The admin API's SCIM settings of a tenant (docs/scim.md, "What DELETE does"). */
import { z } from 'zod';

export const ScimSettingsInput = z.strictObject({
  scim_delete: z
    .enum(['erase', 'deactivate'])
    .describe('DELETE /scim/v2/Users/{id}: erase the user (the default) or only disable them'),
});

export const ScimSettingsView = z
  .object({ scim_delete: z.enum(['erase', 'deactivate']) })
  .describe("The tenant's SCIM settings");
