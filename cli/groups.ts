/** What the `iam groups …` commands share: their flags and a group's printout (docs/rbac.md). */
import { Flags } from '@oclif/core';
import { fields, time } from './format.js';
import { tenantFlag } from './federation.js';
import type { GroupView } from '../shared/schemas/groups.js';

export const groupFlags = {
  tenant: tenantFlag,
  group: Flags.string({ description: 'id of the group (grp_…)', required: true }),
};

export function groupText(g: GroupView): string {
  return fields([
    ['id', g.id],
    ['name', g.display_name],
    ['description', g.description ?? ''],
    ['external id', g.external_id ?? ''],
    ['members', String(g.member_count)],
    ['version', String(g.version)],
    ['created', time(g.created_at)],
    ['updated', time(g.updated_at)],
  ]);
}
