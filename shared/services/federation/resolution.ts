/**
 * Runtime resolution of a SAML entity id to a trust source (docs/federation.md, "Resolution"):
 * the decision and every reason, so that `iam federation resolve` can show why.
 *
 * Order: every source whose live copy lists the entity, by priority (highest first), then
 * sourceKey. A source is passed over when it is not active, is `inventory_only`, has a copy
 * past its validUntil, was suspended by metadata sync, does not serve the role, or does not
 * admit the entity's registration authority. The first source left decides with its
 * entityCategoryPolicy: the first rule whose entityCategory the entity carries (as an
 * entity-category or an entity-category-support value), else defaultDecision; no policy allows.
 */
import type { EntityRole } from './metadata/scan.js';

export interface ResolutionSource {
  id: string;
  sourceKey: string;
  lifecycleState: string;
  suspendedByMetadataSync: boolean;
  runtimeResolution: {
    mode?: string;
    roles?: string[];
    priority?: number;
    registrationAuthorities?: string[];
    entityCategoryPolicy?: {
      defaultDecision: 'allow' | 'deny';
      rules: { entityCategory: string; decision: 'allow' | 'deny'; attributePresetId?: string }[];
    };
    defaultAttributePresetId?: string;
  };
}

export interface ResolutionEntity {
  trustSourceId: string;
  entityId: string;
  roles: string[];
  registrationAuthority: string | null;
  entityCategories: string[];
  entityCategorySupport: string[];
  validUntil: number | null;
}

export interface ResolutionStep {
  trustSourceId: string;
  sourceKey: string;
  priority: number;
  outcome: 'skipped' | 'allow' | 'deny';
  reason: string;
}

export interface ResolutionDecision {
  entityId: string;
  role: EntityRole | null;
  decision: 'allow' | 'deny';
  trustSourceId: string | null;
  attributePresetId: string | null;
  reason: string;
  steps: ResolutionStep[];
}

export function decide(
  entityId: string,
  role: EntityRole | undefined,
  sources: ResolutionSource[],
  entities: ResolutionEntity[],
  now: number,
): ResolutionDecision {
  const byId = new Map(sources.map((s) => [s.id, s]));
  const candidates = entities
    .filter((e) => byId.has(e.trustSourceId))
    .map((e) => ({ e, s: byId.get(e.trustSourceId)! }))
    .sort(
      (a, b) =>
        (b.s.runtimeResolution.priority ?? 0) - (a.s.runtimeResolution.priority ?? 0) ||
        (a.s.sourceKey < b.s.sourceKey ? -1 : a.s.sourceKey > b.s.sourceKey ? 1 : 0),
    );
  const steps: ResolutionStep[] = [];
  const base = { entityId, role: role ?? null };
  for (const { e, s } of candidates) {
    const rr = s.runtimeResolution;
    const step = (outcome: ResolutionStep['outcome'], reason: string) =>
      steps.push({ trustSourceId: s.id, sourceKey: s.sourceKey, priority: rr.priority ?? 0, outcome, reason });
    if (s.lifecycleState !== 'active') {
      step('skipped', `the source is ${s.lifecycleState}`);
      continue;
    }
    if (s.suspendedByMetadataSync) {
      step('skipped', 'the source was suspended by metadata sync');
      continue;
    }
    if (rr.mode !== 'automatic') {
      step('skipped', 'runtimeResolution.mode is inventory_only: its entities are never resolved');
      continue;
    }
    if (e.validUntil !== null && e.validUntil <= now) {
      step('skipped', "the source's metadata is past its validUntil (expired)");
      continue;
    }
    const served = (rr.roles ?? []).filter((r) => e.roles.includes(r));
    const chosen = role ? (served.includes(role) ? role : undefined) : served[0];
    if (!chosen) {
      step(
        'skipped',
        role
          ? `the role ${role} is not both in the source's roles (${(rr.roles ?? []).join(', ') || 'none'})` +
              ` and the entity's (${e.roles.join(', ') || 'none'})`
          : 'the source and the entity share no role',
      );
      continue;
    }
    const ras = rr.registrationAuthorities ?? [];
    if (ras.length && (!e.registrationAuthority || !ras.includes(e.registrationAuthority))) {
      step(
        'skipped',
        `the registration authority ${e.registrationAuthority ?? '(none)'} is not in registrationAuthorities`,
      );
      continue;
    }
    const policy = rr.entityCategoryPolicy;
    const cats = new Set([...e.entityCategories, ...e.entityCategorySupport]);
    const rule = policy?.rules.find((r) => cats.has(r.entityCategory));
    const decision = rule ? rule.decision : (policy?.defaultDecision ?? 'allow');
    const reason = rule
      ? `entity category rule ${rule.entityCategory}: ${rule.decision}`
      : policy
        ? `no entity category rule matched: defaultDecision ${policy.defaultDecision}`
        : 'no entity category policy: allow';
    step(decision, reason);
    return {
      ...base,
      role: chosen as EntityRole,
      decision,
      trustSourceId: s.id,
      attributePresetId: decision === 'allow' ? (rule?.attributePresetId ?? rr.defaultAttributePresetId ?? null) : null,
      reason: `${s.sourceKey} decides: ${reason}`,
      steps,
    };
  }
  return {
    ...base,
    decision: 'deny',
    trustSourceId: null,
    attributePresetId: null,
    reason: candidates.length ? 'no source may resolve this entity' : 'no trust source lists this entity',
    steps,
  };
}
