/**
 * Field mapping and SAML federation services, built together by the container
 * (shared/container.ts) on one database handle.
 */
import type { Database } from '../../db/index.js';
import { NotificationStates } from '../notification-states.js';
import { FieldMappingSetService } from './mapping-sets.js';
import { SourceProfileService } from './source-profiles.js';
import { TrustSourceService } from './trust-sources.js';

export interface FieldMappingServices {
  sourceProfiles: SourceProfileService;
  mappingSets: FieldMappingSetService;
  trustSources: TrustSourceService;
  notifications: NotificationStates;
}

export function fieldMappingServices(
  ds: Database,
  opts: { allowLoopback: boolean; maxAutomaticSources?: number },
): FieldMappingServices {
  return {
    sourceProfiles: new SourceProfileService(ds),
    mappingSets: new FieldMappingSetService(ds),
    trustSources: new TrustSourceService(ds, opts),
    notifications: new NotificationStates(ds),
  };
}

export { FieldMappingSetService, NotificationStates, SourceProfileService, TrustSourceService };
