/**
 * Custom claims (docs/claims.md): a tenant's claim schemas, each user's values validated
 * against them, and the claims a token carries per the schemas' bindings. Used by the admin
 * API, the `iam` CLI and the token and userinfo endpoints alike.
 *
 * System schemas (`email`, `name`) stand for the claims the user record holds. They exist for
 * every tenant: they are written, once, the first time a tenant's schemas are read (an insert
 * that a concurrent one may win, the unique key keeping exactly one). They cannot be renamed or
 * deactivated, and their values are the user record's, emitted as before (email with the
 * `email` scope, name with `profile`) by the token and userinfo endpoints themselves.
 */
import { newId } from '../crypto.js';
import { isUniqueViolation, type Database, type Db } from '../db/index.js';
import { ApiError, notFound } from '../errors.js';
import {
  TenantRepository,
  TenantScope,
  type CustomClaimSchemaRow,
  type CustomClaimValueRow,
  type SchemaPatch,
} from '../repositories/index.js';
import {
  assertFieldKey,
  CreateCustomClaimInput,
  isReservedClaimName,
  LIMITS,
  SetUserClaimsInput,
  UpdateCustomClaimInput,
  type ClaimTokenType,
} from '../schemas/claims.js';
import { parseInput } from '../schemas/validate.js';
import { audit, type Actor } from './audit.js';
import { renameHolding, withRenameMirrors } from './claim-rename.js';
import { checkValues, claimRefusal, importedValues } from './custom-claim-values.js';

/** The record every endpoint returns: the spec's Custom claim schema, plus `is_system`. */
export type CustomClaimSchema = CustomClaimSchemaRow;

/** A user's claim values: the custom ones stored for them and the system ones of their record. */
export interface UserClaims {
  user_id: string;
  claims: Record<string, unknown>;
  system_claims: Record<string, unknown>;
}

/** The schemas every tenant has, for the claims of the user record. */
export const SYSTEM_SCHEMAS = [
  {
    field_key: 'email',
    display_label: 'Email address',
    field_type: 'email',
    cardinality: 'one',
    is_pii: 1,
    is_required: 1,
    field_usage_bindings: [
      { token_type: 'id_token', scopes: ['email'] },
      { token_type: 'userinfo', scopes: ['email'] },
    ],
  },
  {
    field_key: 'name',
    display_label: 'Full name',
    field_type: 'string',
    cardinality: 'one',
    is_pii: 1,
    is_required: 1,
    field_usage_bindings: [
      { token_type: 'id_token', scopes: ['profile'] },
      { token_type: 'userinfo', scopes: ['profile'] },
    ],
  },
] as const;

export const OPERATION_ACTIVE = 'active';

/**
 * Whether a claim with these bindings goes into `tokenType` given the granted scopes: a binding
 * must name the token type, and, when it lists scopes, one of them must have been granted.
 */
export function boundTo(
  bindings: readonly Record<string, unknown>[],
  tokenType: ClaimTokenType,
  scopes: readonly string[],
): boolean {
  return bindings.some((b) => {
    if (b.token_type !== tokenType) return false;
    const wanted = Array.isArray(b.scopes) ? (b.scopes as unknown[]) : undefined;
    return !wanted || wanted.length === 0 || wanted.some((s) => typeof s === 'string' && scopes.includes(s));
  });
}

export class CustomClaimsService {
  constructor(private readonly ds: Database) {}

  private scope(tenantId: string, db: Db = this.ds): TenantScope {
    return new TenantScope(db, tenantId);
  }

  private async requireTenant(tenantId: string): Promise<void> {
    if (!(await new TenantRepository(this.ds).get(tenantId))) throw notFound(`Tenant ${tenantId}`);
  }

  /** Writes the tenant's missing system schemas (once per tenant; a lost race is fine). */
  async ensureSystemSchemas(tenantId: string): Promise<void> {
    const repo = this.scope(tenantId).customClaims;
    const have = new Set((await repo.listSchemas()).filter((s) => s.is_system === 1).map((s) => s.field_key));
    const now = Date.now();
    for (const s of SYSTEM_SCHEMAS) {
      if (have.has(s.field_key)) continue;
      try {
        await repo.insertSchema({
          id: newId('ccs'),
          field_key: s.field_key,
          display_label: s.display_label,
          field_type: s.field_type,
          cardinality: s.cardinality,
          is_pii: s.is_pii,
          is_required: s.is_required,
          is_active: 1,
          is_system: 1,
          operation_status: OPERATION_ACTIVE,
          field_usage_bindings: s.field_usage_bindings.map((b) => ({ ...b, scopes: [...b.scopes] })),
          created_at: now,
          updated_at: now,
        });
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
      }
    }
  }

  /**
   * POST /api/admin/custom-claims. Refusals: invalid_claim_key, reserved_claim_key,
   * claim_key_conflict, claim_schema_limit (docs/claims.md).
   */
  async createSchema(tenantId: string, input: unknown, actor: Actor): Promise<CustomClaimSchema> {
    await this.requireTenant(tenantId);
    const c = parseInput(CreateCustomClaimInput, input);
    const fieldKey = assertFieldKey(c.field_key, 'field_key');
    await this.ensureSystemSchemas(tenantId);
    const now = Date.now();
    try {
      return await this.ds.transaction(async (tx) => {
        const repo = this.scope(tenantId, tx).customClaims;
        if ((await repo.countCustomSchemas()) >= LIMITS.schemasPerTenant) {
          throw new ApiError(
            409,
            'claim_schema_limit',
            `A tenant may define at most ${LIMITS.schemasPerTenant} custom claim schemas.`,
          );
        }
        if (await repo.getSchemaByKey(fieldKey)) throw keyConflict(fieldKey);
        // A running rename holds its old and its new key until it completes (docs/claims.md).
        if (await renameHolding(this.scope(tenantId, tx), fieldKey)) {
          throw new ApiError(
            409,
            'claim_key_conflict',
            `field_key: ${JSON.stringify(fieldKey)} is held by a rename under way in this tenant; ` +
              'try again when it has finished.',
          );
        }
        const { field_key: _k, display_label, field_type, cardinality, is_pii, is_required, is_active } = c;
        const row = await repo.insertSchema({
          id: newId('ccs'),
          field_key: fieldKey,
          display_label,
          field_type,
          cardinality,
          is_pii,
          is_required,
          is_active,
          is_system: 0,
          operation_status: OPERATION_ACTIVE,
          field_usage_bindings: c.field_usage_bindings,
          created_at: now,
          updated_at: now,
        });
        await audit(tx, actor, {
          tenantId,
          action: 'custom_claim.create',
          targetType: 'custom_claim_schema',
          targetId: row.id,
          summary: { after: row },
        });
        return row;
      });
    } catch (e) {
      if (isUniqueViolation(e)) throw keyConflict(fieldKey);
      throw e;
    }
  }

  async listSchemas(tenantId: string): Promise<CustomClaimSchema[]> {
    await this.requireTenant(tenantId);
    await this.ensureSystemSchemas(tenantId);
    return this.scope(tenantId).customClaims.listSchemas();
  }

  async getSchema(tenantId: string, id: string): Promise<CustomClaimSchema> {
    await this.requireTenant(tenantId);
    await this.ensureSystemSchemas(tenantId);
    const s = await this.scope(tenantId).customClaims.getSchema(id);
    if (!s) throw notFound(`Custom claim schema ${id}`);
    return s;
  }

  /**
   * PATCH /api/admin/custom-claims/{id}: changes the label, the flags (is_active 1 reactivates)
   * or the bindings. Refused for a system schema (409 system_claim_schema) and while an
   * operation such as a rename runs (409 claim_operation_in_progress). Audited with before/after.
   */
  async updateSchema(tenantId: string, id: string, input: unknown, actor: Actor): Promise<CustomClaimSchema> {
    const u = parseInput(UpdateCustomClaimInput, input);
    const current = await this.getSchema(tenantId, id);
    if (current.is_system === 1) throw systemSchema(current.field_key, 'changed');
    return this.ds.transaction(async (tx) => {
      const repo = this.scope(tenantId, tx).customClaims;
      const s = await repo.getSchema(id);
      if (!s) throw notFound(`Custom claim schema ${id}`);
      if (s.operation_status !== OPERATION_ACTIVE) throw operationInProgress(s);
      const patch: SchemaPatch = {
        ...(u.display_label !== undefined ? { display_label: u.display_label } : {}),
        ...(u.is_pii !== undefined ? { is_pii: u.is_pii } : {}),
        ...(u.is_required !== undefined ? { is_required: u.is_required } : {}),
        ...(u.is_active !== undefined ? { is_active: u.is_active } : {}),
        ...(u.field_usage_bindings !== undefined ? { field_usage_bindings: u.field_usage_bindings } : {}),
      };
      const now = Date.now();
      // Conditional on the status read above: a rename that starts in between wins.
      if ((await repo.updateSchema(id, patch, now, OPERATION_ACTIVE)) !== 1) throw operationInProgress(s);
      const after = { ...s, ...patch, updated_at: now };
      await audit(tx, actor, {
        tenantId,
        action: 'custom_claim.update',
        targetType: 'custom_claim_schema',
        targetId: id,
        summary: { before: s, after },
      });
      return after;
    });
  }

  /**
   * Deactivates a schema: its values stay stored but are no longer emitted, exported as
   * inactive, or accepted in writes. Refused for a system schema (409 system_claim_schema) and
   * while an operation such as a rename runs (409 claim_operation_in_progress). Deactivating
   * an inactive schema changes nothing and returns it.
   */
  async deactivateSchema(tenantId: string, id: string, actor: Actor): Promise<CustomClaimSchema> {
    const current = await this.getSchema(tenantId, id);
    if (current.is_system === 1) throw systemSchema(current.field_key, 'deactivated');
    if (current.is_active === 0) return current;
    return this.ds.transaction(async (tx) => {
      const repo = this.scope(tenantId, tx).customClaims;
      const s = await repo.getSchema(id);
      if (!s) throw notFound(`Custom claim schema ${id}`);
      if (s.operation_status !== OPERATION_ACTIVE) throw operationInProgress(s);
      const now = Date.now();
      if ((await repo.updateSchema(id, { is_active: 0 }, now, OPERATION_ACTIVE)) !== 1) throw operationInProgress(s);
      await audit(tx, actor, {
        tenantId,
        action: 'custom_claim.deactivate',
        targetType: 'custom_claim_schema',
        targetId: id,
        summary: { field_key: s.field_key },
      });
      return { ...s, is_active: 0, updated_at: now };
    });
  }

  /**
   * PUT …/users/{id}/claims: replaces the user's values of the active custom schemas with
   * `{claims: {key: value}}` (a key left out loses its value; inactive schemas' values are kept).
   * Each key must name an active custom schema of the tenant (unknown_claim, inactive_claim,
   * system_claim), each value must fit its schema (invalid_claim_value), and every active
   * required schema must have a value afterwards (missing_required_claim). A null value is no value.
   */
  async setUserClaims(tenantId: string, userId: string, input: unknown, actor: Actor): Promise<UserClaims> {
    await this.requireTenant(tenantId);
    const { claims } = parseInput(SetUserClaimsInput, input);
    const keys = Object.keys(claims);
    if (keys.length > LIMITS.claimsPerWrite) {
      throw new ApiError(400, 'invalid_request', `claims: at most ${LIMITS.claimsPerWrite} claims per write`);
    }
    await this.ensureSystemSchemas(tenantId);
    return this.ds.transaction(async (tx) => {
      const scope = this.scope(tenantId, tx);
      const user = await scope.users.find(userId);
      if (!user) throw notFound(`User ${userId}`);
      const schemas = new Map((await scope.customClaims.listSchemas()).map((s) => [s.field_key, s]));
      const { rows, stored } = checkValues(schemas, claims);
      for (const s of schemas.values()) {
        if (s.is_system === 0 && s.is_active === 1 && s.is_required === 1 && !(s.field_key in stored)) {
          throw claimRefusal('missing_required_claim', s.field_key, 'is required');
        }
      }
      // Replace within the tenant's active custom schemas: values under inactive schemas are kept.
      const cleared = [...schemas.values()]
        .filter((s) => s.is_system === 0 && s.is_active === 1 && !(s.field_key in stored))
        .map((s) => s.field_key);
      const now = Date.now();
      await this.storeValues(scope, userId, { rows, cleared }, now);
      await audit(tx, actor, {
        tenantId,
        action: 'user.claims.update',
        targetType: 'user',
        targetId: userId,
        // Keys only: the values may be personal data.
        summary: { keys: Object.keys(stored) },
      });
      return { user_id: userId, claims: stored, system_claims: { email: user.email, name: user.name } };
    });
  }

  /**
   * PATCH /api/admin/tenants/{tenantId}/users/{id}'s `claims`, in the caller's transaction: each
   * key checked as setUserClaims checks it, but merged (a key left out keeps its value; null
   * clears one, refused for a required schema). Returns the keys set and cleared. The caller
   * has run ensureSystemSchemas and checked the user exists.
   */
  async mergeUserClaims(
    scope: TenantScope,
    userId: string,
    claims: Record<string, unknown>,
  ): Promise<{ set: string[]; cleared: string[] }> {
    if (Object.keys(claims).length > LIMITS.claimsPerWrite) {
      throw new ApiError(400, 'invalid_request', `claims: at most ${LIMITS.claimsPerWrite} claims per write`);
    }
    const schemas = new Map((await scope.customClaims.listSchemas()).map((s) => [s.field_key, s]));
    const { rows, stored } = checkValues(schemas, claims);
    const cleared = Object.keys(claims).filter((k) => claims[k] === null);
    for (const key of cleared) {
      if (schemas.get(key)?.is_required === 1) throw claimRefusal('missing_required_claim', key, 'is required');
    }
    await this.storeValues(scope, userId, { rows, cleared }, Date.now());
    return { set: Object.keys(stored), cleared };
  }

  /**
   * Writes `rows` and deletes the user's values under the `cleared` keys, inside the caller's
   * transaction. The one place a user's values are written, so an operation on the schemas (a
   * rename's dual write) can hook it.
   */
  protected async storeValues(
    scope: TenantScope,
    userId: string,
    change: { rows: CustomClaimValueRow[]; cleared: string[] },
    now: number,
  ): Promise<void> {
    // While a rename runs, a value written or cleared under its old key is under its new key too.
    const { rows, cleared } = await withRenameMirrors(scope, change);
    await scope.customClaims.deleteValues(userId, cleared);
    await scope.customClaims.upsertValues(userId, rows, now);
  }

  /**
   * An imported record's values (docs/directory.md, "Users: import and export"), checked as a
   * PUT checks them but merged: only the keys given change, a null clears one. A new user
   * (`creating`) must have every active required schema. Throws the PUT's 400s. `schemas`: the
   * tenant's, read once per batch by the caller.
   */
  importValues(schemas: ReadonlyMap<string, CustomClaimSchemaRow>, claims: Record<string, unknown>, creating: boolean) {
    return importedValues(schemas, claims, creating);
  }

  /** Writes what importValues returned, in the caller's transaction (a rename's mirrors included). */
  storeImported(scope: TenantScope, userId: string, change: { rows: CustomClaimValueRow[]; cleared: string[] }) {
    return this.storeValues(scope, userId, change, Date.now());
  }

  /** GET …/users/{id}/claims: the values under the active custom schemas' keys, and the record's system claims. */
  async getUserClaims(tenantId: string, userId: string): Promise<UserClaims> {
    await this.requireTenant(tenantId);
    const scope = this.scope(tenantId);
    const user = await scope.users.find(userId);
    if (!user) throw notFound(`User ${userId}`);
    const claims: Record<string, unknown> = {};
    for (const r of await scope.customClaims.emittable(userId)) claims[r.field_key] = JSON.parse(r.value_json);
    return { user_id: userId, claims, system_claims: { email: user.email, name: user.name } };
  }

  /**
   * The custom claims to merge into a token or a userinfo answer: each active custom schema's
   * value for the user under the schema's CURRENT key, where a binding names `tokenType` and
   * (when it lists scopes) one was granted. One read (ScopedCustomClaims.emittable), so a
   * rename's key switch is never seen half-way. System claims are not included: the endpoints
   * emit them from the user record. `db`: the grant's transaction, when issuing in one.
   */
  async claimsForToken(
    tenantId: string,
    userId: string,
    opts: { tokenType: ClaimTokenType; scopes: readonly string[]; db?: Db },
  ): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const r of await this.scope(tenantId, opts.db).customClaims.emittable(userId)) {
      // A schema made before its key was reserved (a name the service has since started to
      // emit) is never emitted: a custom value must not be read as the service's own claim.
      if (isReservedClaimName(r.field_key)) continue;
      if (boundTo(r.field_usage_bindings, opts.tokenType, opts.scopes)) out[r.field_key] = JSON.parse(r.value_json);
    }
    return out;
  }
}

const keyConflict = (key: string) =>
  new ApiError(
    409,
    'claim_key_conflict',
    `field_key: a claim schema with key ${JSON.stringify(key)} already exists in this tenant.`,
  );

const systemSchema = (key: string, verb: string) =>
  new ApiError(409, 'system_claim_schema', `The system claim schema ${JSON.stringify(key)} cannot be ${verb}.`);

const operationInProgress = (s: CustomClaimSchemaRow) =>
  new ApiError(
    409,
    'claim_operation_in_progress',
    `An operation (${s.operation_status}) is under way on claim schema ${s.id}; try again when it has finished.`,
  );

export { systemSchema as systemClaimSchemaError, operationInProgress as claimOperationInProgressError };
