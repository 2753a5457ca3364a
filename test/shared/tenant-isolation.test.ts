/**
 * The repository layer is the tenant isolation boundary (shared/repositories/scope.ts): a
 * scope bound to tenant A cannot read, list, find or change tenant B's rows, even when it is
 * handed B's ids. Each repository a TenantScope hands out has a case below that seeds real rows
 * for B through the services, then goes through the repository's methods with A's scope, and
 * checks with B's scope that the rows are there (so an empty answer is isolation, not absence).
 *
 * A repository added to TenantScope without a case here fails the first test.
 */
import test, { type ExecutionContext } from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import type { Tenant } from '../../shared/db/entities.js';
import type { Database } from '../../shared/db/index.js';
import { Lookups, PushedRequestLookup, TenantScope, UpstreamLinkQueue } from '../../shared/repositories/index.js';
import { ArtifactService } from '../../shared/services/auth/artifacts.js';
import { AMR_EMAIL_CODE, EmailCodeService } from '../../shared/services/auth/codes.js';
import { OAuthService } from '../../shared/services/auth/oauth.js';
import { tokenHash } from '../../shared/services/auth/pkce.js';
import { SessionService } from '../../shared/services/auth/sessions.js';
import { SignInService } from '../../shared/services/auth/sign-in.js';
import { Throttle } from '../../shared/services/auth/throttle.js';
import { ClaimRenameService } from '../../shared/services/claim-rename.js';
import { CustomClaimsService } from '../../shared/services/custom-claims.js';
import { createPendingExport } from '../../shared/services/data-export.js';
import type { DirectoryService } from '../../shared/services/directory.js';
import { KeyService } from '../../shared/services/keys.js';
import { RecoveryService } from '../../shared/services/recovery/index.js';
import { builtinPlugins, PluginRuntime, PluginService } from '../../shared/services/plugins/index.js';
import { TenantLifecycleService } from '../../shared/services/tenant-lifecycle.js';
import { JtiStore } from '../../shared/services/token-exchange/id-jag.js';
import { TrustSourceService } from '../../shared/services/federation/trust-sources.js';
import { NotificationStates } from '../../shared/services/notification-states.js';
import { ApprovalService } from '../../shared/services/approvals.js';
import { Outbox } from '../../shared/services/outbox.js';
import { MailTemplateService } from '../../shared/services/mail-templates.js';
import { TEST_SECRET_KEY, testDatabase } from '../helpers/db.js';
import { activeTenant, openServices } from '../helpers/seed.js';
import { seedRbacIn } from '../helpers/rbac.js';

interface World {
  t: ExecutionContext;
  directory: DirectoryService;
  /** The database and configuration the services were opened on. */
  services: Awaited<ReturnType<typeof openServices>>;
  a: Tenant;
  b: Tenant;
  scopeA: TenantScope;
  scopeB: TenantScope;
}

/** Tenant B's recovery, opened through the service (B active → recovering, a signed deny route). */
async function recoveryOf(w: World) {
  const { ds, config } = w.services;
  const service = new RecoveryService(ds, new KeyService(ds, config.secretKey, 3600), 'http://iso.example.test');
  const binding = { bindingRef: 'test', providerDatabaseId: 'test', releaseId: 'test' };
  const { recovery } = await service.start(
    { tenantId: w.b.id, reason: 'isolation test', environmentId: 'test', binding },
    actor,
  );
  return { service, id: recovery.operationId };
}

/** Sets columns of tenant B's recovery operation directly, to put it where a write would match it. */
async function setRecovery(w: World, id: string, set: string) {
  await w.services.ds.query(`UPDATE tenant_recovery_operations SET ${set} WHERE id = ?`, [id]);
}

const actor = { type: 'system' as const, id: 'test' };

/** Tenant B with an upstream provider, a user linked to an upstream subject, and a pending upstream login. */
async function upstreamOfB({ directory, b, scopeB }: World) {
  const now = Date.now();
  const user = await directory.createUser(b.id, { email: 'b-up@example.com', name: 'B upstream' }, actor);
  const provider = {
    id: 'uip_b',
    slug: 'corp',
    display_name: 'Corp',
    issuer: 'https://idp.example.test',
    issuer_hash: createHash('sha256').update('https://idp.example.test').digest('base64url'),
    client_id: 'broker',
    client_secret_sealed: 'sealed-secret',
    secret_key_id: 'usk_test',
    scopes: 'openid email',
    link_by_verified_email: false,
    status: 'active' as const,
    created_at: now,
    updated_at: now,
  };
  await scopeB.upstreamIdps.insert(provider);
  const link = {
    id: 'uil_b',
    provider_id: provider.id,
    user_id: user.id,
    upstream_iss: provider.issuer,
    upstream_sub: 'sub-b',
    access_token_sealed: 'sealed-at',
    refresh_token_sealed: 'sealed-rt',
    id_token_sealed: null,
    key_id: 'usk_test',
    access_expires_at: now + 60_000,
    state: 'active' as const,
    lease_holder: null,
    lease_until: null,
    last_refreshed_at: null,
    refresh_failures: 0,
    last_error_code: null,
    created_at: now,
    updated_at: now,
  };
  await scopeB.upstreamLinks.insert(link);
  const state = {
    id: 'uls_b',
    provider_id: provider.id,
    state_hash: createHash('sha256').update(`state-${b.id}`).digest('base64url'),
    auth_request_id: 'ar_b',
    binding: 'bound',
    nonce: 'nonce',
    code_verifier_sealed: 'sealed-verifier',
    key_id: 'usk_test',
    user_hint: null,
    created_at: now,
    expires_at: now + 600_000,
  };
  await scopeB.upstreamLoginStates.insert(state);
  return { user, provider, link, state };
}

/**
 * Tenant B signed in through the sign-in services: a user with a consumed and a live email
 * code, a session, an authorization request, an unredeemed and a redeemed authorization code
 * (a token family and a refresh token), a direct-auth artifact, a consent, a revoked access
 * token, a spent ID-JAG jti, a pending data export, and the history all of that wrote.
 */
/** The login transaction of B's codes, and its stored (hashed) form. */
const BINDING = 'test:b';
const BOUND = createHash('sha256').update(BINDING).digest('base64url');

async function signedInB({ directory, b, scopeB, services }: World) {
  const db = scopeB.db as Database;
  let mailed = '';
  const mail = {
    enqueueEmail: (_tx: unknown, msg: { subject: string }) => {
      mailed = msg.subject;
      return Promise.resolve('mail');
    },
    kick: () => undefined,
  };
  const throttle = new Throttle(db, services.config.throttle, 0);
  const codes = new EmailCodeService(db, TEST_SECRET_KEY, mail, 'iam.example.test', throttle);
  const sessions = new SessionService(db);
  const oauth = new OAuthService(db);
  const user = await directory.createUser(b.id, { email: 'b-user@example.com', name: 'B user' }, actor);
  const created = await directory.createClient(
    b.id,
    { name: 'b-app', redirect_uris: ['https://b.example/cb'], scopes: ['openid', 'email'] },
    actor,
  );
  const client = (await directory.resolveClient(created.client.client_id))!.client;
  const meta = { ip: '192.0.2.1', userAgent: 'test' };
  const login = {
    tenantId: b.id,
    clientId: client.client_id,
    email: user.email,
    binding: BINDING,
    allowSignup: false,
    meta,
  };
  await codes.sendCode(login);
  // Only the email code signs in here; the other methods are not reached.
  const unused = { prove: () => Promise.reject(new Error('not used by this test')) };
  const signIn = new SignInService(db, {
    codes,
    sessions,
    artifacts: new ArtifactService(db),
    passkeys: unused,
    upstreamBroker: unused,
  });
  const signedIn = await signIn.session(
    { emailCode: { ...login, code: /(\d{6})/.exec(mailed)![1] } },
    { clientId: client.client_id, meta },
  );
  const session = signedIn.session;
  await codes.sendCode(login); // a live code too
  const liveCode = (await scopeB.emailCodes.latestLive(user.email, BOUND))!;
  const verifier = randomBytes(32).toString('base64url');
  const params = {
    client_id: client.client_id,
    redirect_uri: 'https://b.example/cb',
    response_type: 'code' as const,
    scope: ['openid', 'email'],
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256' as const,
  };
  const challenge = await oauth.saveAuthRequest(b.id, params);
  const issue = () =>
    oauth.issueCode({
      tenantId: b.id,
      params,
      userId: user.id,
      sessionId: session.id,
      authTime: session.auth_time,
      acr: session.acr,
      amr: session.amr,
    });
  const unredeemed = await issue();
  const redeemed = await oauth.exchangeCode(client, {
    code: await issue(),
    redirectUri: params.redirect_uri,
    codeVerifier: verifier,
  });
  const familyId = redeemed.code.family_id;
  const refreshToken = redeemed.refreshToken!;
  const { artifact } = await new ArtifactService(db).createArtifact({
    user: signedIn.user,
    clientId: client.client_id,
    channel: 'browser',
    providerId: 'email_code',
    codeChallenge: params.code_challenge,
    authRequestId: null,
    authTime: Date.now(),
    amr: AMR_EMAIL_CODE,
  });
  const consent = await oauth.grantConsent({
    tenantId: b.id,
    userId: user.id,
    clientId: client.client_id,
    scopes: ['openid'],
  });
  const jti = randomBytes(16).toString('base64url');
  await oauth.revokeAccessToken(jti, b.id, Date.now() + 600_000);
  const spent = { iss: 'https://idp.example', jti: 'jag-1', exp: Math.floor(Date.now() / 1000) + 300, tenantId: b.id };
  await new JtiStore(db).consume(spent);
  const exportId = await createPendingExport(db, {
    tenantId: b.id,
    userId: user.id,
    sections: ['profile'],
    format: 'json',
  });
  return {
    db,
    lookups: new Lookups(db),
    user,
    client,
    session,
    liveCode,
    challenge,
    unredeemed,
    familyId,
    refreshToken,
    artifact,
    consent,
    jti,
    spentKey: JtiStore.key(spent.iss, spent.jti),
    exportId,
  };
}

/** One case per repository of TenantScope, keyed by its getter's name. */
/**
 * Tenant B's RBAC rows: a resource server, a permission, a role holding it, a group, and the role
 * held by a user, the group (the user a member) and a machine client.
 */
async function rbacOfB({ directory, b, scopeB, services }: World) {
  const api = 'https://rbac.example.test';
  const now = Date.now();
  const client = await directory.createClient(
    b.id,
    { name: 'rbac api', grant_types: ['client_credentials'], resource_identifiers: [api] },
    actor,
  );
  const user = await directory.createUser(b.id, { email: 'b-rbac@example.com', name: 'B rbac' }, actor);
  const group = 'grp_b_rbac';
  await services.ds.query(
    `INSERT INTO user_groups (id, tenant_id, display_name, display_name_key, version, created_at, updated_at)
     VALUES (?, ?, 'G', 'g', 1, ?, ?)`,
    [group, b.id, now, now],
  );
  await services.ds.query('INSERT INTO group_members (tenant_id, group_id, user_id, created_at) VALUES (?, ?, ?, ?)', [
    b.id,
    group,
    user.id,
    now,
  ]);
  const perm = { id: 'perm_b', resource: api, permission: 'invoices:read', description: null, created_at: now };
  await scopeB.resourcePermissions.insert(perm);
  const role = {
    id: 'role_b',
    name: 'Billing',
    description: null,
    resource: api,
    version: 1,
    created_at: now,
    updated_at: now,
  };
  await scopeB.roles.insert(role);
  await scopeB.roles.setPermissions(role.id, [perm.id], now);
  for (const [type, id] of [
    ['user', user.id],
    ['group', group],
    ['client', client.client.client_id],
  ] as const)
    await scopeB.roleAssignments.add({ role_id: role.id, principal_type: type, principal_id: id, created_at: now });
  return { api, user, group, perm, role, clientId: client.client.client_id, now };
}

const cases: Record<string, (w: World) => Promise<void>> = {
  async tenantData(w) {
    // B with a user, a session, a client and a token family (signedInB), then A's counts and
    // A's purge run to the end: A's own rows go, every one of B's stays.
    const { t, directory, b, scopeA, scopeB } = w;
    await directory.createUser(b.id, { email: 'b-data@example.com', name: 'B' }, actor);
    await signedInB(w);
    const before = await scopeB.tenantData.counts(Date.now());
    t.true(before.users >= 2 && before.clients >= 1 && before.active_sessions >= 1);
    const ownA = await scopeA.tenantData.counts(Date.now());
    t.is(ownA.active_sessions, 0);
    for (let i = 0; i < 1000 && (await scopeA.tenantData.purgeBatch(100)).deleted > 0; i++);
    t.deepEqual(await scopeA.tenantData.counts(Date.now()), { users: 0, clients: 0, active_sessions: 0 });
    t.deepEqual(await scopeB.tenantData.counts(Date.now()), before);
    t.is((await scopeB.users.list()).length, before.users);
  },
  async plugins({ t, services, b, scopeA, scopeB }) {
    // Tenant B's own plugin setting, written through the plugin service as an operator would.
    const runtime = new PluginRuntime(services.ds, services.config.secretKey, builtinPlugins({ allowLoopback: true }));
    const plugins = new PluginService(services.ds, runtime);
    await plugins.configure('audit-webhook', b.id, { url: 'https://siem.b.example/in' }, actor);
    t.truthy(await scopeB.plugins.get('audit-webhook'));
    t.is(await scopeA.plugins.get('audit-webhook'), undefined);
    t.deepEqual(await scopeA.plugins.list(), []);
    // A write through A's scope makes A's own row; B's is untouched.
    await scopeA.plugins.put({ pluginId: 'audit-webhook', enabled: true, config: '{}', secretsSealed: null, now: 1 });
    const bRow = (await scopeB.plugins.get('audit-webhook'))!;
    t.is(bRow.enabled, null);
    t.is(JSON.parse(bRow.config).url, 'https://siem.b.example/in');
    t.is((await scopeB.plugins.list()).length, 1);
  },
  async registrations({ t, directory, b, scopeA, scopeB }) {
    // B's dynamic registration record and initial access token, written through B's scope.
    const bClient = (
      await directory.createClient(
        b.id,
        { name: 'b-dcr', redirect_uris: ['https://b.example/cb'], public: true },
        actor,
      )
    ).client;
    const now = Date.now();
    await scopeB.registrations.insert({
      client_id: bClient.client_id,
      access_token_hash: 'rat-hash-b',
      initial_access_token_id: null,
      application_type: 'web',
      software_id: null,
      software_version: null,
      contacts: [],
      client_secret_expires_at: 0,
      created_at: now - 10_000,
    });
    const iat = {
      id: 'iat_b',
      max_uses: 2,
      uses: 0,
      scope_ceiling: null,
      created_by: 'test',
      created_at: now,
      expires_at: now + 60_000,
    };
    await scopeB.registrations.insertInitialToken({ ...iat, token_hash: 'iat-hash-b' });
    t.is(await scopeA.registrations.get(bClient.client_id), undefined);
    t.deepEqual(await scopeA.registrations.unusedBefore(now, 10), []);
    t.false(await scopeA.registrations.tokensIssued(bClient.client_id));
    const rotated = {
      access_token_hash: 'hijacked',
      application_type: 'web' as const,
      software_id: null,
      software_version: null,
      contacts: [],
    };
    t.is(await scopeA.registrations.update(bClient.client_id, rotated, now), 0);
    t.is(await scopeA.registrations.markUsed(bClient.client_id, now), 0);
    t.is(await scopeA.registrations.initialToken('iat_b'), undefined);
    t.deepEqual(await scopeA.registrations.initialTokens(), []);
    t.is(await scopeA.registrations.spendInitialToken('iat_b', now), 0);
    t.is(await scopeA.registrations.removeInitialToken('iat_b'), 0);
    // B's rows are there and untouched.
    const bReg = (await scopeB.registrations.get(bClient.client_id))!;
    t.is(bReg.access_token_hash, 'rat-hash-b');
    t.is(bReg.used_at, null);
    t.is((await scopeB.registrations.unusedBefore(now, 10)).length, 1);
    t.is((await scopeB.registrations.initialToken('iat_b'))!.uses, 0);
    t.is(await scopeB.registrations.spendInitialToken('iat_b', now), 1);
  },
  async clients({ t, directory, b, scopeA, scopeB }) {
    const bClient = (
      await directory.createClient(b.id, { name: 'b-app', redirect_uris: ['https://b.example/cb'] }, actor)
    ).client;
    t.is(await scopeA.clients.get(bClient.id), null);
    t.is(await scopeA.clients.getByClientId(bClient.client_id), null);
    t.false((await scopeA.clients.list()).some((c) => c.id === bClient.id));
    t.is((await scopeB.clients.get(bClient.id))!.client_id, bClient.client_id);
    // The lifecycle's writes (docs/directory.md, "Clients") through A's scope touch nothing of B's.
    const now = Date.now();
    const bSecrets = await scopeB.clients.liveSecrets(bClient.client_id, now);
    t.is(bSecrets.length, 1);
    t.deepEqual(await scopeA.clients.liveSecrets(bClient.client_id, now), []);
    t.is(await scopeA.clients.update(bClient.id, bClient.client_id, { name: 'hijacked' }), 0);
    t.is(await scopeA.clients.touch(bClient.client_id, now), 0);
    t.is(await scopeA.clients.setStatus(bClient.client_id, 'disabled', 1), 0);
    t.is(await scopeA.clients.revokeGrants(bClient.client_id, now), 0);
    t.is(await scopeA.clients.expireLiveSecrets(bClient.client_id, now, now), 0);
    t.is(await scopeA.clients.revokeSecret(bClient.client_id, bSecrets[0].id, now), 0);
    t.is(await scopeA.clients.remove(bClient.id, bClient.client_id), 0);
    await scopeA.clients.insertSecret({ id: 'csec_a_side', clientId: bClient.client_id, hash: 'h', createdAt: now });
    const bAfter = (await scopeB.clients.get(bClient.id))!;
    t.is(bAfter.name, 'b-app');
    t.is(bAfter.status, 'active');
    t.deepEqual(
      (await scopeB.clients.liveSecrets(bClient.client_id, now + 1)).map((x) => x.id),
      [bSecrets[0].id],
    );
    // RFC 8707's registered resource servers and RFC 9728's hosted document (docs/mcp.md).
    const R = 'https://b-api.example.test';
    const bApi = (
      await directory.createClient(
        b.id,
        { name: 'b-api', grant_types: ['client_credentials'], resource_identifiers: [R] },
        actor,
      )
    ).client;
    t.is(await scopeB.clients.setResourceMetadata(bApi.client_id, '{"resource":"x"}', now), 1);
    t.deepEqual(await scopeA.clients.registeredResources([R]), []);
    t.is(await scopeA.clients.resourceMetadata(bApi.client_id), null);
    t.is(await scopeA.clients.setResourceMetadata(bApi.client_id, null, now, true), 0);
    t.deepEqual(await scopeB.clients.registeredResources([R, 'https://none.example.test']), [R]);
    t.is(await scopeB.clients.resourceMetadata(bApi.client_id), '{"resource":"x"}');
    t.false((await scopeB.clients.get(bApi.id))!.strict_introspection);
  },

  async users(w) {
    const { t, directory, a, b, scopeA, scopeB } = w;
    const bUser = await directory.createUser(b.id, { email: 'shared@example.com', name: 'B user' }, actor);
    const aUser = await directory.createUser(a.id, { email: 'shared@example.com', name: 'A user' }, actor);
    t.is(await scopeA.users.get(bUser.id), null);
    // Same email in both tenants: A's lookup finds A's user, never B's.
    t.is((await scopeA.users.getByEmail('shared@example.com'))!.id, aUser.id);
    t.deepEqual(
      (await scopeA.users.list()).map((u) => u.id),
      [aUser.id],
    );
    t.is((await scopeB.users.get(bUser.id))!.name, 'B user');
    // The admin read, search and edit (docs/directory.md, "Users: read, search, edit").
    t.is(await scopeA.users.record(bUser.id, { forUpdate: true }), undefined);
    t.deepEqual(
      (await scopeA.users.search({ emailPrefix: 'shared', limit: 10 })).map((u) => u.id),
      [aUser.id],
    );
    t.is(
      await scopeA.users.updateProfile(bUser.id, { email: 'b@x.test', name: 'Taken', emailVerified: false, now: 1 }),
      0,
    );
    t.like(await scopeB.users.record(bUser.id), { name: 'B user', email: 'shared@example.com', email_verified: true });
    // The point reads and the sign-up's insert of the sign-in path.
    const { user } = await signedInB(w);
    t.is(await scopeA.users.find(user.id), undefined);
    t.is(await scopeA.users.findByEmail(user.email), undefined);
    t.is(await scopeA.users.status(user.id), undefined);
    t.is(await scopeA.users.withTenantState(user.id), undefined);
    // The account page's writes (name, address change) through A's scope touch nothing of B's.
    t.false(await scopeA.users.setName(user.id, 'renamed in A', 2));
    t.false(await scopeA.users.changeEmail(user.id, user.email, 'moved@a.example', 2));
    // A sign-up in A with B's address makes A's user; B's is untouched.
    const mine = await scopeA.users.insertSignup({ id: 'usr_a_signup', email: user.email, name: 'A', now: 1 });
    t.is(mine.tenant_id, a.id);
    t.is((await scopeA.users.findByEmail(user.email))!.id, 'usr_a_signup');
    t.is((await scopeB.users.findByEmail(user.email))!.id, user.id);
    t.is((await scopeB.users.find(user.id))!.name, 'B user');
    t.is(await scopeB.users.status(user.id), 'active');
    t.is((await scopeB.users.withTenantState(user.id))!.lifecycle_state, 'active');
  },

  async audit({ t, a, scopeA, scopeB }) {
    t.false((await scopeA.audit.list()).some((e) => e.tenant_id !== a.id));
    t.true((await scopeB.audit.list()).some((e) => e.action === 'tenant.create'));
  },

  async provisioning(w) {
    const { t, scopeA, scopeB } = w;
    const op = (await scopeB.provisioning.latest())!;
    t.not((await scopeA.provisioning.latest())!.id, op.id);
    const snapshot = async () => ({
      op: await scopeB.provisioning.get(op.id),
      steps: await scopeB.provisioning.steps(op.id),
      history: await scopeB.provisioning.history(op.id, 1000),
    });
    const p = scopeA.provisioning;
    const now = Date.now();
    // Reads.
    t.is(await p.get(op.id), undefined);
    t.deepEqual(await p.steps(op.id), []);
    t.deepEqual(await p.history(op.id, 1000), []);
    // B's operation leased by 'iso', due and its lease expired: every runner write would match it.
    await w.services.ds.query(
      `UPDATE provisioning_operations SET status = 'running', lease_holder = 'iso', lease_until = 0, next_attempt_at = 0
      WHERE id = ?`,
      [op.id],
    );
    const before = await snapshot();
    const fail = { status: 'blocked', code: 'x', cause: 'x', nextAttemptAt: null, now };
    t.is(await p.insertStep(op.id, 'extra_step', 99, now), 0);
    t.is(
      await p.appendEvent({
        id: `pev_iso_${now}`,
        operationId: op.id,
        event: 'failed',
        step: null,
        attempt: null,
        errorCode: 'x',
        errorCause: null,
        actorType: 'system',
        actorId: 'iso',
        now,
      }),
      0,
    );
    t.is(await p.claim(op.id, 'other', now + 60_000, now), 0);
    t.is(await p.release(op.id, 'iso', 'queued', now, now), 0);
    t.is(await p.beginAttempt(op.id, 'iso', 'request_accepted', now + 60_000, now), 0);
    t.is(await p.moveTo(op.id, 'iso', 'schema_verified', {}, now + 60_000, now), 0);
    t.is(await p.complete(op.id, 'iso', 'tenant_activated', {}, now), 0);
    t.is(await p.fail(op.id, 'iso', fail), 0);
    t.is(await p.markStepRunning(op.id, 'request_accepted', now), 0);
    t.is(
      await p.completeStep(op.id, 'request_accepted', { observed: 'x', progressCurrent: 1, progressTotal: 1 }, now),
      0,
    );
    t.is(await p.failStep(op.id, 'request_accepted', { ...fail, failures: 9 }), 0);
    t.deepEqual(await snapshot(), before, "B's operation, steps and history are unchanged");
    // Blocked: what an operator's retry would requeue.
    await w.services.ds.query("UPDATE provisioning_operations SET status = 'blocked' WHERE id = ?", [op.id]);
    await w.services.ds.query(
      "UPDATE provisioning_steps SET status = 'blocked' WHERE operation_id = ? AND step_key = 'tenant_activated'",
      [op.id],
    );
    const blocked = await snapshot();
    t.deepEqual(await p.blockedSteps(op.id), []);
    t.is(await p.requeueBlocked(op.id, 'request_accepted', now), 0);
    t.is(await p.resetBlockedSteps(op.id, now), 0);
    t.deepEqual(await snapshot(), blocked);
    // A's own writes land in A.
    await p.insertOperation({
      id: `prv_iso_${now}`,
      kind: 'tenant_create',
      isolationPolicy: 'shared_database',
      firstStep: 'request_accepted',
      input: {},
      now,
    });
    t.is((await p.get(`prv_iso_${now}`))!.tenant_id, w.a.id);
    t.is(await scopeB.provisioning.get(`prv_iso_${now}`), undefined);
    // And with B's scope, B's rows are there.
    t.deepEqual(await scopeB.provisioning.blockedSteps(op.id), ['tenant_activated']);
    t.is((await scopeB.provisioning.steps(op.id)).length, 5);
    t.true((await scopeB.provisioning.history(op.id, 1000)).length > 0);
  },

  async recoveryOperations(w) {
    const { t, scopeA, scopeB } = w;
    const { id } = await recoveryOf(w);
    const o = scopeA.recoveryOperations;
    const now = Date.now();
    const targets = [{ shardId: 'iso' }];
    t.is(await o.get(id), undefined);
    t.deepEqual(await o.list(), []);
    t.is(await o.open(), undefined);
    t.is(await o.nextSeq(), 1, "A's sequence, not B's");
    const unchanged = async (label: string, calls: () => Promise<number[]>) => {
      const before = await scopeB.recoveryOperations.get(id);
      const changed = await calls();
      t.deepEqual(
        changed,
        changed.map(() => 0),
        label,
      );
      t.deepEqual(await scopeB.recoveryOperations.get(id), before, `${label}: B's operation is unchanged`);
    };
    // Publishing its deny, held by a verify run 'iso': the state and lease writes would match.
    await setRecovery(w, id, "state = 'publishing_deny', lease_owner = 'iso', lease_expires_at = 9999999999999");
    await unchanged('leased', async () => [
      await o.denyNotObserved(id, 'x', now),
      await o.denyObserved(id, now, now),
      await o.verifyFinished(id, 'iso', {
        smokeSuccessCount: 3,
        smokeResults: [],
        smokeVerifiedAt: now,
        stabilizationNotBefore: now,
        state: 'stabilizing',
        targets,
        errorCode: null,
        errorCause: null,
        now,
      }),
      await o.verifyFailed(id, 'iso', 'x', 'x', now),
      await o.releaseVerify(id, 'iso'),
      await o.migrationsVerified(id, 'iso', targets, now, now),
      await o.scanStarted(id, 'iso', now),
      await o.scanned(id, 'iso', { afterCreatedAt: 1, afterId: 'x', rows: 1, stage: 'verify', leaseUntil: now, now }),
      await o.counted(id, 'iso', { afterRowId: 1, confirmed: 1, leaseUntil: now, now }),
      await o.lookupRestarted(id, 'iso', now),
      await o.digestPinned(id, 'iso', 'sha256:x', now),
      await o.lookupDone(id, 'iso', targets, now),
    ]);
    await setRecovery(w, id, "state = 'awaiting_restore', lease_owner = NULL, lease_expires_at = NULL");
    await unchanged('awaiting restore', async () => [
      await o.restoreConfirmed(id, 'snap', targets, now),
      await o.cancelled(id, 'awaiting_restore', now),
    ]);
    await setRecovery(w, id, "state = 'stabilizing', binding_smoke_verified_at = 5");
    await unchanged('stabilizing', async () => [
      await o.claimVerify(id, 'other', now + 60_000, now, true),
      await o.reactivated(id, 99, 5, now),
    ]);
    // With B's scope, B's operation is there and open.
    t.is((await scopeB.recoveryOperations.get(id))!.tenant_id, w.b.id);
    t.is((await scopeB.recoveryOperations.open())!.id, id);
    t.deepEqual(
      (await scopeB.recoveryOperations.list()).map((r) => r.id),
      [id],
    );
    t.is(await scopeB.recoveryOperations.nextSeq(), 2);
  },

  async routes(w) {
    const { t, scopeA, scopeB } = w;
    await recoveryOf(w);
    const route = (await scopeB.routes.get())!;
    const publication = (await scopeB.routes.latestPublication())!;
    const r = scopeA.routes;
    const now = Date.now();
    t.is(await r.get(), undefined);
    t.is(await r.observed(), undefined);
    t.is(await r.latestPublication(), undefined);
    const next = { state: 'active', runtimeGeneration: 99, registryGeneration: 99, registryDigest: null };
    const at = { routeGeneration: route.route_generation, runtimeGeneration: route.runtime_generation };
    t.is(await r.advance(at, next, now), 0, "B's route at its generations is not moved");
    // A's own route and publication land in A.
    await r.createInitial(now);
    await r.insertPublication({ ...publication, id: `pub_iso_${now}`, runtime_generation: 1, published_at: now });
    t.is((await r.latestPublication())!.id, `pub_iso_${now}`);
    t.is((await r.get())!.tenant_id, w.a.id);
    t.deepEqual(await scopeB.routes.get(), route);
    t.deepEqual(await scopeB.routes.latestPublication(), publication);
    t.is((await scopeB.routes.observed())!.state, 'deny');
  },

  async lookupRows(w) {
    const { t, directory, scopeA, scopeB, b } = w;
    await directory.createClient(b.id, { name: 'b-app', redirect_uris: ['https://b.example/cb'] }, actor);
    await directory.createUser(b.id, { email: 'b@example.com', name: 'B user' }, actor);
    const { service, id } = await recoveryOf(w);
    await setRecovery(w, id, 'drain_not_before = 0');
    await service.confirmRestore(id, 'snap-iso', actor);
    await service.verify(id, { batchSize: 10, stabilizationSeconds: 0 }, actor);
    const gen = (await scopeB.recoveryOperations.get(id))!.lookup_registry_generation;
    const rowsOfB = () => scopeB.lookupRows.page(gen, '', '', 100);
    const before = await rowsOfB();
    t.is(before.length, 2);
    await scopeB.lookupRows.insertProbe('probe-iso', 1, Date.now());
    const l = scopeA.lookupRows;
    t.deepEqual(await l.sourcesAfter(0, '', 100), []);
    t.deepEqual(await l.confirmAfter(gen, 0, 100), []);
    t.is(await l.sourceCount(), 0);
    t.deepEqual(await l.page(gen, '', '', 100), []);
    t.is(await l.countProbe('probe-iso'), 0);
    t.is((await l.tenantProbe())!.lifecycle_state, 'active', "A's tenant, not B's (recovering)");
    t.is(await l.deleteAbandoned(gen + 1, -5), 0);
    t.is(await l.deleteNewerThan(-5), 0);
    t.is(await l.deleteAllBut(-5), 0);
    // A's own rows land in A.
    const sources = await scopeB.lookupRows.sourcesAfter(0, '', 100);
    await l.insert(sources, gen, 1, Date.now());
    await l.insertProbe('probe-iso', 1, Date.now());
    t.is((await l.page(gen, '', '', 100)).length, 2);
    // B's rows are there, unchanged.
    t.deepEqual(await rowsOfB(), before);
    t.is(await scopeB.lookupRows.sourceCount(), 2);
    t.is((await scopeB.lookupRows.confirmAfter(gen, 0, 100)).length, 2);
    t.is(await scopeB.lookupRows.countProbe('probe-iso'), 1);
    t.is((await scopeB.lookupRows.tenantProbe())!.lifecycle_state, 'recovering');
  },

  async lifecycleJobs({ t, services, a, b, scopeA, scopeB }) {
    const job = await new TenantLifecycleService(services.ds).move(
      b.id,
      'suspend',
      { expected_state: 'active', expected_updated_at: 0, reason: 'isolation test', break_glass: true },
      actor,
    );
    t.is(await scopeA.lifecycleJobs.get(job.job_id), undefined);
    const now = Date.now();
    await scopeA.lifecycleJobs.insert({
      id: `tlj_iso_${now}`,
      action: 'suspend',
      status: 'completed',
      lifecycle_state: 'suspended',
      reason: 'A',
      break_glass: false,
      actor_id: 'iso',
      created_at: now,
    });
    t.is((await scopeA.lifecycleJobs.get(`tlj_iso_${now}`))!.reason, 'A');
    t.is(await scopeB.lifecycleJobs.get(`tlj_iso_${now}`), undefined);
    const own = (await scopeB.lifecycleJobs.get(job.job_id))!;
    t.is(own.lifecycle_state, 'suspended');
    t.is(own.break_glass, true);
    t.not(a.id, b.id);
  },

  async emailCodes(w) {
    const { t, scopeA, scopeB } = w;
    const { user, liveCode } = await signedInB(w);
    t.is(await scopeA.emailCodes.latestLive(user.email, BOUND), undefined);
    t.is(await scopeA.emailCodes.consumedAt(liveCode.id), null);
    t.is(await scopeA.emailCodes.supersede(user.email, BOUND, Date.now()), 0);
    t.false(await scopeA.emailCodes.countAttempt(liveCode.id, 5));
    t.false(await scopeA.emailCodes.consume(liveCode.id, 5, Date.now()));
    await scopeA.emailCodes.insert({
      id: 'ec_a',
      email: user.email,
      userId: null,
      clientId: 'c',
      binding: BOUND,
      codeHash: 'h',
      createdAt: Date.now(),
      expiresAt: Date.now() + 60_000,
    });
    t.is((await scopeA.emailCodes.latestLive(user.email, BOUND))!.id, 'ec_a');
    t.deepEqual(await scopeB.emailCodes.latestLive(user.email, BOUND), liveCode);
    t.is(await scopeB.emailCodes.consumedAt(liveCode.id), null);
  },

  async sessions(w) {
    const { t, a, scopeA, scopeB } = w;
    const { user, session } = await signedInB(w);
    const now = Date.now();
    t.is(await scopeA.sessions.touch(session.id, now + 120_000), 0);
    t.is(await scopeA.sessions.revoke(session.id, now), 0);
    t.is(await scopeA.sessions.reauthenticate(session.id, now, 'x', ['x']), 0);
    t.false(await scopeA.sessions.isLiveWithActiveUser(session.id));
    t.deepEqual(await scopeA.sessions.listLive(user.id, now, 10), []);
    t.deepEqual(await scopeA.sessions.liveIds(user.id, now), []);
    await scopeA.sessions.insert({ ...session, id: 'sess_a', ip: null });
    t.deepEqual(await scopeA.sessions.liveIds(user.id, now), ['sess_a']);
    t.is((await new Lookups(scopeA.db).sessionByCookieHash('sess_a'))?.session.tenant_id ?? a.id, a.id);
    t.deepEqual(await scopeB.sessions.liveIds(user.id, now), [session.id]);
    t.true(await scopeB.sessions.isLiveWithActiveUser(session.id));
    const [mine] = await scopeB.sessions.listLive(user.id, now, 10);
    t.is(mine.last_seen_at, session.last_seen_at);
    const theirs = await new Lookups(scopeB.db).sessionByCookieHash(session.id);
    t.is(theirs?.session.acr, session.acr, 'the step-up from tenant A left the session alone');
  },

  async artifacts(w) {
    const { t, a, b, scopeA } = w;
    const { lookups, artifact } = await signedInB(w);
    const hash = tokenHash(artifact);
    t.false(await scopeA.artifacts.consume(hash, Date.now()));
    const theirs = (await lookups.artifactByHash(hash))!;
    t.is(theirs.tenantId, b.id);
    t.false(theirs.consumed);
    const { tenantId: _t, consumed: _c, ...row } = theirs;
    await scopeA.artifacts.insert({ ...row, id: 'art_a', createdAt: Date.now() });
    t.is((await lookups.artifactByHash('art_a'))!.tenantId, a.id);
  },

  async authRequests(w) {
    const { t, a, b, scopeA } = w;
    const { lookups, challenge } = await signedInB(w);
    t.false(await scopeA.authRequests.consume(challenge, Date.now()));
    const theirs = (await lookups.authRequestById(challenge))!;
    t.is(theirs.tenantId, b.id);
    t.false(theirs.consumed);
    await scopeA.authRequests.insert({
      id: 'ar_a',
      clientId: 'c',
      params: {},
      createdAt: 1,
      expiresAt: Date.now() + 60_000,
    });
    t.is((await lookups.authRequestById('ar_a'))!.tenantId, a.id);
  },

  async pushedRequests(w) {
    const { t, a, b, scopeA, scopeB } = w;
    const lookup = new PushedRequestLookup(w.services.ds);
    const row = { clientId: 'cl_b', params: { scope: ['openid'] }, createdAt: 1, expiresAt: Date.now() + 60_000 };
    await scopeB.pushedRequests.insert({ id: 'par_b', ...row });
    t.false(await scopeA.pushedRequests.use('par_b', 'cl_b', Date.now()));
    const theirs = (await lookup.byHash('par_b'))!;
    t.is(theirs.tenantId, b.id);
    t.false(theirs.used);
    await scopeA.pushedRequests.insert({ id: 'par_a', ...row });
    t.is((await lookup.byHash('par_a'))!.tenantId, a.id);
    t.true(await scopeB.pushedRequests.use('par_b', 'cl_b', Date.now()));
  },

  async authCodes(w) {
    const { t, a, b, scopeA } = w;
    const { lookups, unredeemed } = await signedInB(w);
    const hash = tokenHash(unredeemed);
    t.false(await scopeA.authCodes.consume(hash, Date.now()));
    const theirs = (await lookups.authCodeByHash(hash))!;
    t.is(theirs.tenant_id, b.id);
    t.is(theirs.consumed_at, null);
    const { tenant_id: _t, consumed_at: _c, ...row } = theirs;
    await scopeA.authCodes.insert({ ...row, id: 'code_a', created_at: Date.now() });
    t.is((await lookups.authCodeByHash('code_a'))!.tenant_id, a.id);
  },

  async tokens(w) {
    const { t, a, scopeA, scopeB } = w;
    const { lookups, user, client, session, familyId, refreshToken, consent, jti, spentKey } = await signedInB(w);
    const now = Date.now();
    const refreshHash = tokenHash(refreshToken);
    t.is(await scopeA.tokens.family(familyId), undefined);
    t.is(await scopeA.tokens.revokeFamily(familyId, 'test', now), 0);
    t.is(await scopeA.tokens.revokeFamiliesOfSession(session.id, 'test', now), 0);
    t.is(
      await scopeA.tokens.revokeFamiliesOfConsent(user.id, { id: consent.id, clientId: client.client_id }, 'test', now),
      0,
    );
    t.deepEqual(await scopeA.tokens.appsOfSessions(user.id, [session.id]), []);
    t.false(await scopeA.tokens.consumeRefreshToken(refreshHash, now));
    t.false(await scopeA.tokens.isAccessTokenRevoked(jti, familyId));
    const state = (await scopeA.tokens.revocationState({ jti, familyId, clientId: client.client_id, sub: user.id }))!;
    t.deepEqual(
      [state.r_jti ?? null, state.r_fam ?? null, state.c_status ?? null, state.u_status ?? null],
      [null, null, null, null],
    );
    // Writes through A land in A, or collide with B's key and change nothing of B's.
    await t.throwsAsync(() => scopeA.tokens.revokeAccessToken(jti, now + 1, now), { any: true });
    t.false(await scopeA.tokens.recordSpentJti(spentKey, now + 1, now));
    await scopeA.tokens.createFamily({
      id: 'fam_a',
      userId: user.id,
      clientId: client.client_id,
      sessionId: session.id,
      consentId: null,
      scope: ['openid'],
      createdAt: now,
    });
    await scopeA.tokens.insertRefreshToken({ id: 'rt_a', familyId, createdAt: now, expiresAt: now + 60_000 });
    t.is((await scopeA.tokens.family('fam_a'))!.tenant_id, a.id);
    t.is((await lookups.refreshTokenByHash('rt_a'))!.tenant_id, a.id);
    t.is(await scopeB.tokens.family('fam_a'), undefined);
    // B's rows as they were.
    t.is((await scopeB.tokens.family(familyId))!.revoked_at, null);
    t.is((await lookups.refreshTokenByHash(refreshHash))!.consumed_at, null);
    t.true(await scopeB.tokens.isAccessTokenRevoked(jti, undefined));
    t.deepEqual(
      (await scopeB.tokens.appsOfSessions(user.id, [session.id])).map((x) => x.client_id),
      [client.client_id],
    );
    const theirs = (await scopeB.tokens.revocationState({ jti, familyId, clientId: client.client_id, sub: user.id }))!;
    t.deepEqual(
      [theirs.r_jti !== null, theirs.r_fam ?? null, theirs.c_status, theirs.u_status],
      [true, null, 'active', 'active'],
    );
  },

  async agentGrants({ t, scopeA, scopeB }) {
    const now = Date.now();
    const row = {
      id: `aag_iso_${now}`,
      client_id: 'agent-b',
      grantor_user_id: 'usr_b',
      delegator_user_id: null,
      machine_principal_id: null,
      authorization_details: [{ type: 'docs', actions: ['read'] }],
      purpose: null,
      expires_at: now + 60_000,
      status: 'active' as const,
      generation: 1,
      consent_version: 1,
      immutable_terms: { task_set: null, scope_policy: null, resolved_tools: null, permissions: null, scopes: [] },
      ceilings: { updater: { docs: ['*'] }, grantor: { docs: ['*'] } },
      created_at: now,
      updated_at: now,
    };
    await scopeB.agentGrants.insert(row);
    await scopeB.agentGrants.insertConsent(row.id, 1, now);
    await scopeB.agentGrants.insertToken(
      { jti: `jti_iso_${now}`, grantId: row.id, generation: 1, expiresAt: now + 60_000 },
      now,
    );
    const a = scopeA.agentGrants;
    t.is(await a.get(row.id), undefined);
    t.deepEqual(await a.list(100), []);
    t.false(await a.hasLiveConsent(row.id, 1));
    t.deepEqual(await a.consents(row.id), []);
    t.is(await a.bump(row.id, 1, { authorization_details: [], purpose: 'x', expires_at: now }, now), 0);
    t.is(await a.revoke(row.id, 1, now), 0);
    t.is(await a.revokeConsentsBelow(row.id, 5, now), 0);
    t.is(await a.countLiveBelow(row.id, 5, now), 0);
    t.deepEqual(await a.liveBelow(row.id, 5), []);
    await a.revokeToken(`jti_iso_${now}`, now + 60_000, now);
    const b = scopeB.agentGrants;
    t.like(await b.get(row.id), { generation: 1, status: 'active' });
    t.deepEqual(
      (await b.list(100)).map((g) => g.id),
      [row.id],
    );
    t.true(await b.hasLiveConsent(row.id, 1));
    t.is(await b.countLiveBelow(row.id, 5, now), 1, "A's revocation did not touch B's token family");
    // Introspection's revocation statement reads the grant's generation within the token's tenant only.
    const probe = { jti: 'jti_none', familyId: '', clientId: 'none', sub: '', agentGrantId: row.id };
    t.is((await scopeA.tokens.revocationState(probe))!.g_gen ?? null, null);
    t.is(Number((await scopeB.tokens.revocationState(probe))!.g_gen), 1);
  },

  async passkeys({ t, b, directory, scopeA, scopeB }) {
    const user = await directory.createUser(b.id, { email: 'b-pk@example.com', name: 'B passkey' }, actor);
    const now = Date.now();
    const row = {
      id: 'pk_b',
      userId: user.id,
      credentialId: 'Y3JlZC1i',
      credentialHash: createHash('sha256').update('Y3JlZC1i').digest('hex'),
      userHandle: 'aGFuZGxl',
      publicKey: 'cHVibGlj',
      counter: 3,
      transports: ['internal'],
      deviceType: 'singleDevice' as const,
      backedUp: false,
      aaguid: '00000000-0000-0000-0000-000000000000',
      name: 'B key',
      createdAt: now,
      lastUsedAt: null,
    };
    await scopeB.passkeys.insert(row);
    const a = scopeA.passkeys;
    t.is(await a.byCredentialHash(row.credentialHash), undefined);
    t.deepEqual(await a.listByUser(user.id), []);
    t.is(await a.get(user.id, row.id), undefined);
    t.false(await a.exists(row.id));
    t.false(await a.rename(user.id, row.id, 'Mine'));
    t.false(await a.recordUse(row.id, 3, { counter: 9, backedUp: true, now }));
    t.false(await a.remove(user.id, row.id));
    // The same credential in A is A's own row (the unique key is per tenant).
    await a.insert({ ...row, id: 'pk_a' });
    t.is((await a.byCredentialHash(row.credentialHash))!.id, 'pk_a');
    const theirs = (await scopeB.passkeys.byCredentialHash(row.credentialHash))!;
    t.deepEqual([theirs.id, theirs.name, theirs.counter, theirs.lastUsedAt], ['pk_b', 'B key', 3, null]);
    t.true(await scopeB.passkeys.exists(row.id));
    t.is((await scopeB.passkeys.get(user.id, row.id))!.name, 'B key');
  },

  async passkeyTombstones({ t, scopeA, scopeB }) {
    const now = Date.now();
    const tomb = {
      passkeyId: 'pk_b_gone',
      credentialHash: createHash('sha256').update('Z29uZS1i').digest('hex'),
      removedAt: now,
      expiresAt: now + 60_000,
    };
    await scopeB.passkeyTombstones.record(tomb);
    // B's removal gives A no reason to signal the credential as unknown.
    t.false(await scopeA.passkeyTombstones.liveForCredential(tomb.credentialHash, now));
    t.false(await scopeA.passkeyTombstones.liveForPasskey(tomb.passkeyId, now));
    // A's own removal of the same credential replaces only A's tombstone.
    await scopeA.passkeyTombstones.record({ ...tomb, passkeyId: 'pk_a_gone', expiresAt: now + 1 });
    t.true(await scopeA.passkeyTombstones.liveForPasskey('pk_a_gone', now));
    t.true(await scopeB.passkeyTombstones.liveForCredential(tomb.credentialHash, now));
    t.true(await scopeB.passkeyTombstones.liveForPasskey(tomb.passkeyId, now));
    t.false(await scopeB.passkeyTombstones.liveForPasskey('pk_a_gone', now));
  },

  async webauthnChallenges({ t, scopeA, scopeB }) {
    const now = Date.now();
    const ch = {
      id: 'wac_b',
      purpose: 'authentication' as const,
      challenge: 'Y2hhbGxlbmdl',
      userId: null,
      sessionId: null,
      clientId: 'c',
      authRequestId: null,
      createdAt: now,
      expiresAt: now + 60_000,
    };
    await scopeB.webauthnChallenges.insert(ch);
    t.is(await scopeA.webauthnChallenges.find(ch.id), undefined);
    t.false(await scopeA.webauthnChallenges.consume(ch.id, 'authentication', now));
    t.is((await scopeB.webauthnChallenges.find(ch.id))!.consumedAt, null);
    t.true(await scopeB.webauthnChallenges.consume(ch.id, 'authentication', now));
  },

  async consents(w) {
    const { t, scopeA, scopeB } = w;
    const { user, client, consent } = await signedInB(w);
    const now = Date.now();
    t.is(await scopeA.consents.latest(user.id, client.client_id), undefined);
    t.deepEqual(await scopeA.consents.listWithClientNames(user.id), []);
    t.is(await scopeA.consents.liveClientOf(user.id, consent.id), undefined);
    t.is(
      await scopeA.consents.regrant(consent.id, {
        scopes: ['openid', 'email'],
        privacy_policy_version: '2',
        tos_version: null,
        now,
      }),
      0,
    );
    t.is(await scopeA.consents.withdraw(user.id, consent.id, now), 0);
    const { tenant_id: _t, ...row } = consent;
    await scopeA.consents.insert({ ...row, id: 'cns_a' });
    t.is((await scopeA.consents.latest(user.id, client.client_id))!.id, 'cns_a');
    const theirs = (await scopeB.consents.latest(user.id, client.client_id))!;
    t.is(theirs.id, consent.id);
    t.deepEqual(theirs.scopes, ['openid']);
    t.is(await scopeB.consents.liveClientOf(user.id, consent.id), client.client_id);
    t.deepEqual(
      (await scopeB.consents.listWithClientNames(user.id)).map((c) => c.id),
      [consent.id],
    );
  },

  async exports(w) {
    const { t, scopeA, scopeB } = w;
    const { user, exportId } = await signedInB(w);
    const now = Date.now();
    for (const section of ['consents', 'sessions', 'auth_history'] as const) {
      t.is(await scopeA.exports.countRows(section, user.id), 0);
      t.deepEqual((await scopeA.exports.sectionPage(section, user.id, 100)).rows, []);
      t.true((await scopeB.exports.countRows(section, user.id)) > 0, section);
    }
    t.is(await scopeA.exports.profile(user.id), undefined);
    t.is(await scopeA.exports.find(user.id, exportId, now), undefined);
    t.is(await scopeA.exports.complete(exportId, '{}', now, now + 1), 0);
    t.is(await scopeA.exports.fail(exportId, now), 0);
    await scopeA.exports.insertPending({
      id: 'dex_a',
      userId: user.id,
      format: 'json',
      sections: [],
      createdAt: now,
      expiresAt: now + 60_000,
    });
    t.is((await scopeA.exports.find(user.id, 'dex_a', now))!.status, 'pending');
    t.is(await scopeB.exports.find(user.id, 'dex_a', now), undefined);
    t.is((await scopeB.exports.find(user.id, exportId, now))!.status, 'pending');
    t.is((await scopeB.exports.profile(user.id))!.email, user.email);
    t.true((await scopeB.exports.sectionPage('auth_history', user.id, 100)).rows.length > 0);
  },

  async authHistory(w) {
    const { t, scopeA, scopeB } = w;
    const { user } = await signedInB(w);
    const before = await scopeB.exports.countRows('auth_history', user.id);
    t.true(before > 0);
    await scopeA.authHistory.append({
      id: 'ah_a',
      user_id: user.id,
      event: 'logout',
      outcome: 'success',
      reason: null,
      client_id: null,
      ip: null,
      user_agent: null,
      created_at: Date.now(),
    });
    t.is(await scopeA.exports.countRows('auth_history', user.id), 1);
    t.is(await scopeB.exports.countRows('auth_history', user.id), before);
    // The sign-in history's page: B's sign-ins are not A's, with or without the user filter.
    const signIns = { events: ['email_code_verify', 'logout'], limit: 100 };
    const fromB = await scopeB.authHistory.page({ ...signIns, userId: user.id });
    t.true(fromB.some((r) => r.event === 'email_code_verify'));
    t.false(fromB.some((r) => r.id === 'ah_a'));
    t.deepEqual(
      (await scopeA.authHistory.page({ ...signIns, userId: user.id })).map((r) => r.id),
      ['ah_a'],
    );
    t.deepEqual(
      (await scopeA.authHistory.page(signIns)).map((r) => r.id),
      ['ah_a'],
    );
    // The last sign-in read: A's scope sees only its own (logout) row, which is no sign-in.
    t.is(await scopeA.authHistory.lastSignIn(user.id), undefined);
    t.truthy(await scopeB.authHistory.lastSignIn(user.id));
  },
  async customClaims(w) {
    const { t, scopeA, scopeB, directory } = w;
    const claims = new CustomClaimsService(w.services.ds);
    const schema = await claims.createSchema(
      w.b.id,
      {
        field_key: 'department',
        display_label: 'Department',
        field_type: 'string',
        field_usage_bindings: [{ token_type: 'id_token' }],
      },
      actor,
    );
    const user = await directory.createUser(w.b.id, { email: 'claims-b@example.test', name: 'B' }, actor);
    await claims.setUserClaims(w.b.id, user.id, { claims: { department: 'sales' } }, actor);
    const now = Date.now();
    t.deepEqual(await scopeA.customClaims.listSchemas(), []);
    t.is(await scopeA.customClaims.countCustomSchemas(), 0);
    t.is(await scopeA.customClaims.getSchema(schema.id), undefined);
    t.is(await scopeA.customClaims.getSchemaByKey('department'), undefined);
    t.is(await scopeA.customClaims.updateSchema(schema.id, { is_active: 0 }, now), 0);
    t.is(await scopeA.customClaims.setOperationStatus(schema.id, 'renaming', now), 0);
    t.is(await scopeA.customClaims.setOperationStatus(schema.id, 'renaming', now, 'active'), 0);
    t.deepEqual(await scopeA.customClaims.userValues(user.id), []);
    t.deepEqual(await scopeA.customClaims.userValues(user.id, ['department']), []);
    t.deepEqual(await scopeA.customClaims.emittable(user.id), []);
    t.deepEqual(await scopeA.customClaims.exportRows(user.id), []);
    t.is(await scopeA.customClaims.deleteValues(user.id), 0);
    t.is(await scopeA.customClaims.deleteValues(user.id, ['department']), 0);
    // Writes through A's scope land in A, even with B's key and B's user id.
    await scopeA.customClaims.insertSchema({ ...schema, id: 'ccs_a', display_label: 'A' });
    await scopeA.customClaims.upsertValues(user.id, [{ field_key: 'department', value_json: '"a"' }], now);
    t.is((await scopeA.customClaims.getSchemaByKey('department'))!.id, 'ccs_a');
    const theirs = (await scopeB.customClaims.getSchemaByKey('department'))!;
    t.is(theirs.id, schema.id);
    t.is(theirs.is_active, 1);
    t.is(theirs.operation_status, 'active');
    t.deepEqual(await scopeB.customClaims.userValues(user.id), [{ field_key: 'department', value_json: '"sales"' }]);
    t.deepEqual(
      (await scopeB.customClaims.emittable(user.id)).map((r) => [r.field_key, r.value_json]),
      [['department', '"sales"']],
    );
    t.deepEqual(
      (await scopeB.customClaims.exportRows(user.id)).map((r) => [r.field_key, r.value_json]),
      [['department', '"sales"']],
    );
  },
  async claimRenames(w) {
    const { t, scopeA, scopeB, directory } = w;
    const claims = new CustomClaimsService(w.services.ds);
    const schema = await claims.createSchema(
      w.b.id,
      { field_key: 'team', display_label: 'Team', field_type: 'string', field_usage_bindings: [] },
      actor,
    );
    const user = await directory.createUser(w.b.id, { email: 'rename-b@example.test', name: 'B' }, actor);
    await claims.setUserClaims(w.b.id, user.id, { claims: { team: 'blue' } }, actor);
    // B's rename accepted, then leased by 'iso' with the lease expired: every runner write would match it.
    const accepted = await new ClaimRenameService(w.services.ds, { options: { inlineMaxUsers: 0 } }).start(
      w.b.id,
      schema.id,
      { new_field_key: 'squad' },
      actor,
    );
    const opId = accepted.operation.id;
    await w.services.ds.query("UPDATE claim_rename_operations SET lease_holder = 'iso', lease_until = 0 WHERE id = ?", [
      opId,
    ]);
    const r = scopeA.claimRenames;
    const now = Date.now();
    // Reads.
    t.is(await r.get(opId), undefined);
    t.is(await r.latestForSchema(schema.id), undefined);
    t.is(await r.schema(schema.id), undefined);
    t.false(await r.keyInUse('team'));
    t.is(await r.reservedBy('squad'), undefined);
    t.is((await r.runningKeys()).size, 0);
    t.is(await r.countValues('team'), 0);
    t.deepEqual(await r.usersAfter('team', '', 100), []);
    // Writes with B's ids and keys change nothing of B's.
    t.is(await r.markRenaming(schema.id, 'team', now), 0);
    t.is(await r.claim(opId, 'iso', now + 10_000, now), 0);
    t.is(await r.hold(opId, 'iso', 'copying', now + 10_000, now), 0);
    t.is(await r.copyRange('team', 'squad', '', '~'), 0);
    t.is(await r.advanceCopy(opId, 'iso', '~', 1, now), 0);
    t.is(await r.reconcile('team', 'squad'), 0);
    t.is(await r.switchKey(schema.id, 'team', 'squad', now), 0);
    t.is(await r.moveState(opId, 'iso', 'copying', 'cleanup', now), 0);
    t.is(await r.deleteRange('team', '', '~'), 0);
    t.is(await r.deleteAll('team'), 0);
    t.is(await r.advanceCleanup(opId, 'iso', '~', 1, now), 0);
    t.is(await r.finish(opId, 'iso', 'copying', 'failed', 'x', now), 0);
    t.is(await r.markActive(schema.id, now), 0);
    t.is(await r.release(opId, 'iso', now), 0);
    t.is(await r.unreserve(opId), 0);
    // B's rename, schema, reservations and value are as they were.
    const op = (await scopeB.claimRenames.get(opId))!;
    t.is(op.state, 'copying');
    t.is(op.lease_holder, 'iso');
    t.is(op.checkpoint, null);
    t.is((await scopeB.claimRenames.schema(schema.id))!.operation_status, 'renaming');
    t.is((await scopeB.claimRenames.schema(schema.id))!.field_key, 'team');
    t.is(await scopeB.claimRenames.reservedBy('squad'), opId);
    t.is(await scopeB.claimRenames.reservedBy('team'), opId);
    t.deepEqual(Object.fromEntries(await scopeB.claimRenames.runningKeys()), { team: 'squad' });
    t.is(await scopeB.claimRenames.countValues('team'), 1);
  },
  async sourceProfiles({ t, scopeA, scopeB }) {
    const now = Date.now();
    const profile = {
      id: 'spr_b',
      tenant_id: '',
      profile_key: 'hr-feed',
      display_name: 'B feed',
      source_type: 'csv',
      lifecycle_state: 'active',
      active_version_id: null,
      created_at: now,
      updated_at: now,
    };
    await scopeB.sourceProfiles.insert(profile);
    await scopeB.sourceProfiles.insertVersion({
      id: 'spv_b',
      profile_id: 'spr_b',
      version_label: 'v1',
      lifecycle_state: 'active',
      schema_hash: 'h',
      schema_json: { columns: ['email'] },
      parser_options: null,
      warning_summary: {},
      source_metadata: null,
      parse_draft_id: null,
      created_at: now,
    });
    t.is(await scopeA.sourceProfiles.get('spr_b'), undefined);
    t.is(await scopeA.sourceProfiles.byKey('hr-feed'), undefined);
    t.deepEqual(await scopeA.sourceProfiles.list(100, 0), []);
    t.is(await scopeA.sourceProfiles.version('spv_b'), undefined);
    t.deepEqual(await scopeA.sourceProfiles.versions('spr_b'), []);
    t.is(await scopeA.sourceProfiles.setActiveVersion('spr_b', 'spv_b', now), 0);
    // The same key in A is A's own profile.
    await scopeA.sourceProfiles.insert({ ...profile, id: 'spr_a' });
    t.is((await scopeA.sourceProfiles.byKey('hr-feed'))!.id, 'spr_a');
    t.is((await scopeB.sourceProfiles.byKey('hr-feed'))!.id, 'spr_b');
    t.is((await scopeB.sourceProfiles.versions('spr_b')).length, 1);
    t.is((await scopeB.sourceProfiles.get('spr_b'))!.active_version_id, null);
  },

  async fieldMappingSets({ t, scopeA, scopeB }) {
    const now = Date.now();
    const set = {
      id: 'fms_b',
      tenant_id: '',
      set_key: 'saml-basic',
      display_name: 'B set',
      description: null,
      source_type: 'saml',
      source_profile_id: null,
      lifecycle_state: 'active',
      mappings: [{ source: 'urn:oid:0.9.2342.19200300.100.1.3', targetType: 'user' as const, target: 'email' }],
      created_at: now,
      updated_at: now,
    };
    await scopeB.fieldMappingSets.insert(set);
    t.is(await scopeA.fieldMappingSets.get('fms_b'), undefined);
    t.is(await scopeA.fieldMappingSets.byKey('saml-basic'), undefined);
    t.deepEqual(await scopeA.fieldMappingSets.list(100, 0), []);
    t.deepEqual(await scopeA.fieldMappingSets.ofSourceType('saml'), []);
    t.is((await scopeB.fieldMappingSets.ofSourceType('saml')).length, 1);
    t.is(await scopeA.fieldMappingSets.update({ ...set, display_name: 'A was here' }), 0);
    t.is(await scopeA.fieldMappingSets.delete('fms_b'), 0);
    t.is((await scopeB.fieldMappingSets.get('fms_b'))!.display_name, 'B set');
  },

  async trustSources({ t, a, b, scopeA, scopeB, services }) {
    const ds = services.ds;
    const now = Date.now();
    await scopeB.fieldMappingSets.insert({
      id: 'fms_bt',
      tenant_id: '',
      set_key: 'idp',
      display_name: 'idp',
      description: null,
      source_type: 'saml',
      source_profile_id: null,
      lifecycle_state: 'active',
      mappings: [],
      created_at: now,
      updated_at: now,
    });
    const service = new TrustSourceService(ds, { allowLoopback: false });
    const body = {
      sourceType: 'saml_aggregate',
      sourceKey: 'edugain',
      displayName: 'eduGAIN',
      protocolPayload: {
        metadataUrl: 'https://mds.edugain.org/edugain-v2.xml',
        polling: { mode: 'automatic', intervalSeconds: 3600 },
        runtimeResolution: { mode: 'automatic', roles: ['saml_idp'], idpFieldMappingSetId: 'fms_bt' },
      },
    };
    const src = await service.create(b.id, body, actor);
    // A cannot name B's mapping set either.
    await t.throwsAsync(() => service.create(a.id, body, actor), { message: /idpFieldMappingSetId/ });
    t.is(await scopeA.trustSources.get(src.id), undefined);
    t.is(await scopeA.trustSources.byKey('edugain'), undefined);
    t.deepEqual(await scopeA.trustSources.list(100, 0), []);
    t.deepEqual(await scopeA.trustSources.listAll(), []);
    t.deepEqual(await scopeA.trustSources.referencingSet('fms_bt'), []);
    const row = (await scopeB.trustSources.get(src.id))!;
    t.is(
      await scopeA.trustSources.update(src.id, { ...row, display_name: 'A was here' }, row.updated_at, null, now),
      0,
    );
    t.is(await scopeA.trustSources.claim(src.id, 'poller-a', now + 60_000, now + 1, true), 0);
    t.is(await scopeA.trustSources.renew(src.id, 'poller-a', now + 60_000), 0);
    t.is(await scopeA.trustSources.writePollerFields(src.id, 'poller-a', { etag: '"x"' }, true), 0);
    await t.throwsAsync(() => service.get(a.id, src.id), { message: /was not found/ });
    // The poller's queue crosses tenants by design and returns ids with their tenant.
    t.true((await service.due(now + 1000, 10)).some((d) => d.id === src.id && d.tenantId === b.id));
    const theirs = (await scopeB.trustSources.get(src.id))!;
    t.is(theirs.display_name, 'eduGAIN');
    t.is(theirs.etag, null);
    t.deepEqual(
      (await scopeB.trustSources.referencingSet('fms_bt')).map((r) => r.id),
      [src.id],
    );
  },

  async mailTemplates({ t, b, scopeA, scopeB, services }) {
    const templates = new MailTemplateService(services.ds, { issuerHost: 'iso.example.test' });
    await templates.put(b.id, 'sign_in_code', 'de', { subject: 'B: {{code}}' }, actor);
    const now = Date.now();
    t.deepEqual(await scopeA.mailTemplates.list(), []);
    t.is(await scopeA.mailTemplates.get('sign_in_code', 'de'), undefined);
    const write = { kind: 'sign_in_code', locale: 'de', subject: 'A', textBody: null, htmlBody: null, now };
    t.false(await scopeA.mailTemplates.update(write));
    await scopeA.mailTemplates.setError('sign_in_code', 'de', 'A wrote', now);
    t.false(await scopeA.mailTemplates.delete('sign_in_code', 'de'));
    // A's insert of the same kind and locale is A's own row.
    await scopeA.mailTemplates.insert(write);
    t.is((await scopeA.mailTemplates.get('sign_in_code', 'de'))!.subject, 'A');
    const theirs = (await scopeB.mailTemplates.get('sign_in_code', 'de'))!;
    t.is(theirs.subject, 'B: {{code}}');
    t.is(theirs.last_error, null);
    t.is((await scopeB.mailTemplates.list()).length, 1);
  },

  async notificationStates({ t, b, scopeA, scopeB, services }) {
    const states = new NotificationStates(services.ds);
    const subject = { type: 'federation_trust_source', id: 'fts_b' };
    const raised = await states.raise(b.id, 'metadata_expiring', subject, { validUntil: 'soon' });
    t.is(raised.outcome, 'opened');
    const key = 'metadata_expiring:federation_trust_source:fts_b';
    t.is(await scopeA.notificationStates.get(raised.id!), undefined);
    t.is(await scopeA.notificationStates.byOpenKey(key), undefined);
    t.deepEqual(await scopeA.notificationStates.list({}, 100, 0), []);
    t.is(await scopeA.notificationStates.touchOpen(key, {}, Date.now()), 0);
    t.is(await scopeA.notificationStates.resolve(raised.id!, 'a-operator', Date.now()), 0);
    t.is(await scopeA.notificationStates.clear(key, Date.now()), 0);
    t.false(await scopeA.notificationStates.quieted(key));
    // The same condition and subject in A is A's own state, not a duplicate of B's.
    await scopeA.notificationStates.insertOpen({
      id: 'ons_a',
      condition: 'metadata_expiring',
      subjectType: 'federation_trust_source',
      subjectId: 'fts_b',
      details: {},
      key,
      now: Date.now(),
    });
    const theirs = (await scopeB.notificationStates.get(raised.id!))!;
    t.is(theirs.state, 'open');
    t.is(theirs.assigned_to, null);
    t.is(theirs.raise_count, 1);
    t.is((await scopeB.notificationStates.byOpenKey(key))!.id, raised.id!);
  },

  async upstreamIdps(w) {
    const { t, scopeA, scopeB } = w;
    const { provider } = await upstreamOfB(w);
    const now = Date.now();
    t.is(await scopeA.upstreamIdps.get(provider.id), undefined);
    t.is(await scopeA.upstreamIdps.getBySlug(provider.slug), undefined);
    t.is(await scopeA.upstreamIdps.findByIssuerClient(provider.issuer_hash, provider.client_id), undefined);
    t.deepEqual(await scopeA.upstreamIdps.list(), []);
    t.is(await scopeA.upstreamIdps.setStatus(provider.id, 'disabled', now), 0);
    // A may register the same issuer and client for itself: uniqueness is per tenant.
    await scopeA.upstreamIdps.insert({ ...provider, id: 'uip_a' });
    t.deepEqual(
      (await scopeA.upstreamIdps.list()).map((p) => p.id),
      ['uip_a'],
    );
    t.deepEqual(
      (await scopeB.upstreamIdps.list({ activeOnly: true })).map((p) => p.id),
      [provider.id],
    );
    t.is((await scopeB.upstreamIdps.getBySlug(provider.slug))!.id, provider.id);
  },

  async upstreamLinks(w) {
    const { t, a, scopeA, scopeB } = w;
    const { provider, link, user } = await upstreamOfB(w);
    const now = Date.now();
    t.is(await scopeA.upstreamLinks.get(link.id), undefined);
    t.is(await scopeA.upstreamLinks.findBySubject(provider.id, link.upstream_sub), undefined);
    t.deepEqual(await scopeA.upstreamLinks.listForUser(user.id), []);
    t.deepEqual(await scopeA.upstreamLinks.listDue(now + 3_600_000, 10), []);
    t.deepEqual(await scopeA.upstreamLinks.needingReauthentication(user.id), []);
    t.is(await scopeA.upstreamLinks.claimLease(link.id, 'a', now + 60_000, now), 0);
    const tokens = {
      access_token_sealed: 'x',
      refresh_token_sealed: null,
      id_token_sealed: null,
      key_id: 'k',
      access_expires_at: now,
    };
    t.is(await scopeA.upstreamLinks.storeSignIn(link.id, tokens, now), 0);
    t.is(await scopeA.upstreamLinks.storeRefreshed(link.id, 'a', tokens, now), 0);
    t.is(await scopeA.upstreamLinks.recordFailure(link.id, 'a', 'e', now), 0);
    t.is(await scopeA.upstreamLinks.markReauthenticationRequired(link.id, 'a', 'invalid_grant', now), 0);
    t.is(await scopeA.upstreamLinks.releaseLease(link.id, 'a'), 0);
    // B's link as it was, and its lease still free for B.
    const theirs = (await scopeB.upstreamLinks.get(link.id))!;
    t.is(theirs.access_token_sealed, link.access_token_sealed);
    t.is(theirs.state, 'active');
    t.is(theirs.lease_holder, null);
    t.deepEqual(
      (await scopeB.upstreamLinks.listDue(now + 3_600_000, 10)).map((l) => l.id),
      [link.id],
    );
    t.is(await scopeB.upstreamLinks.claimLease(link.id, 'b', now + 60_000, now), 1);
    // The cross-tenant queue names B only.
    const queue = new UpstreamLinkQueue(w.services.ds);
    t.deepEqual(await queue.tenantsWithDueLinks(now + 3_600_000, '', 10), [w.b.id]);
    t.not(a.id, w.b.id);
  },

  async linkRefresh(w) {
    const { t, scopeA, scopeB } = w;
    const { link, user } = await upstreamOfB(w);
    const now = Date.now();
    const far = now + 3_600_000;
    t.false(await scopeA.linkRefresh.hasActiveProvider());
    t.deepEqual(await scopeA.linkRefresh.due({ dueBefore: far, now, limit: 10 }), []);
    t.deepEqual(await scopeA.linkRefresh.due({ dueBefore: far, now, limit: 10, userId: user.id }), []);
    t.is(await scopeA.linkRefresh.countNotDue({ dueBefore: 0, userId: user.id }), 0);
    t.is(await scopeA.linkRefresh.get(link.id), undefined);
    t.is(await scopeA.linkRefresh.claim(link.id, 'a', now + 60_000, now), 0);
    const tokens = {
      access_token_sealed: 'x',
      refresh_token_sealed: 'y',
      id_token_sealed: null,
      key_id: 'k',
      access_expires_at: now,
    };
    t.is(await scopeA.linkRefresh.storeRefreshed(link.id, 'a', tokens, now), 0);
    t.is(
      await scopeA.linkRefresh.markReauthentication(link.id, 'a', link.refresh_token_sealed, 'invalid_grant', now),
      0,
    );
    t.is(await scopeA.linkRefresh.backOff(link.id, 'a', far, 'e', now), 0);
    t.is(await scopeA.linkRefresh.release(link.id, 'a'), 0);
    // B sees its provider and its link, untouched, and can lease it.
    t.true(await scopeB.linkRefresh.hasActiveProvider());
    t.deepEqual(
      (await scopeB.linkRefresh.due({ dueBefore: far, now, limit: 10 })).map((l) => l.id),
      [link.id],
    );
    t.is(await scopeB.linkRefresh.countNotDue({ dueBefore: 0, userId: user.id }), 1);
    const theirs = (await scopeB.linkRefresh.get(link.id))!;
    t.is(theirs.refresh_token_sealed, link.refresh_token_sealed);
    t.is(theirs.state, 'active');
    t.is(theirs.refresh_failures, 0);
    t.is(await scopeB.linkRefresh.claim(link.id, 'b', now + 60_000, now), 1);
  },

  async relationships({ t, b, directory, scopeA, scopeB }) {
    const x = await directory.createUser(b.id, { email: 'rel-x@example.com', name: 'X' }, actor);
    const y = await directory.createUser(b.id, { email: 'rel-y@example.com', name: 'Y' }, actor);
    const now = Date.now();
    await scopeB.relationships.insert({
      id: 'rel_b',
      subject_id: x.id,
      related_subject_id: y.id,
      relationship_type: 'manager_of',
      expires_at: null,
      created_at: now,
    });
    t.is(await scopeA.relationships.get('rel_b'), undefined);
    t.is(await scopeA.relationships.findEdge(x.id, y.id, 'manager_of'), undefined);
    t.deepEqual(await scopeA.relationships.list(x.id, 'outgoing', now), []);
    t.deepEqual(await scopeA.relationships.list(y.id, 'incoming', now), []);
    t.deepEqual(await scopeA.relationships.subjectsToward(y.id, 'manager_of', now), []);
    t.is(await scopeA.relationships.delete('rel_b'), 0);
    // The same edge in A is A's own row (uniqueness is per tenant).
    await scopeA.relationships.insert({
      id: 'rel_a',
      subject_id: x.id,
      related_subject_id: y.id,
      relationship_type: 'manager_of',
      expires_at: null,
      created_at: now,
    });
    // A's row joins no user of B: A lists nothing (the join binds the tenant too).
    t.deepEqual(await scopeA.relationships.list(x.id, 'outgoing', now), []);
    const theirs = await scopeB.relationships.list(x.id, 'outgoing', now);
    t.deepEqual(
      theirs.map((r) => [r.id, r.other_email]),
      [['rel_b', 'rel-y@example.com']],
    );
    t.deepEqual(await scopeB.relationships.subjectsToward(y.id, 'manager_of', now), [x.id]);
  },

  async groups({ t, b, directory, services, scopeA, scopeB }) {
    const u = await directory.createUser(b.id, { email: 'grp-u@example.com', name: 'U' }, actor);
    const now = Date.now();
    const g = {
      id: 'grp_b',
      display_name: 'B group',
      display_name_key: 'b group',
      description: null,
      external_id: 'ext-b',
      created_at: now,
      updated_at: now,
    };
    await scopeB.groups.insert(g);
    t.is(await scopeB.groups.addMember('grp_b', u.id, now), 1);
    await services.ds.query(
      'INSERT INTO role_assignments (tenant_id, role_id, principal_type, principal_id, created_at) ' +
        "VALUES (?, 'role_b', 'group', 'grp_b', 1)",
      [b.id],
    );
    t.is(await scopeA.groups.get('grp_b'), undefined);
    t.is(await scopeA.groups.get('grp_b', { forUpdate: true }), undefined);
    t.is(await scopeA.groups.byNameKey('b group'), undefined);
    t.is(await scopeA.groups.byExternalId('ext-b'), undefined);
    t.deepEqual(await scopeA.groups.list({ limit: 100 }), []);
    t.deepEqual(await scopeA.groups.list({ limit: 100, nameKeyPrefix: 'b', modifiedAfter: 0 }), []);
    t.is(await scopeA.groups.count({ nameKeyPrefix: 'b' }), 0);
    t.is(await scopeA.groups.count(), 0);
    const fields = { display_name: 'A', display_name_key: 'a', description: null, external_id: null };
    t.is(await scopeA.groups.update('grp_b', fields, now), 0);
    t.is(await scopeA.groups.touch('grp_b', now), 0);
    t.is(await scopeA.groups.isMember('grp_b', u.id), false);
    t.deepEqual(await scopeA.groups.members('grp_b', { limit: 10 }), []);
    t.is(await scopeA.groups.memberCount('grp_b'), 0);
    t.deepEqual(await scopeA.groups.ofUser(u.id), []);
    t.deepEqual([...(await scopeA.groups.existingUsers([u.id]))], []);
    t.is(await scopeA.groups.removeMember('grp_b', u.id), 0);
    t.is(await scopeA.groups.removeAllMembers('grp_b'), 0);
    t.is(await scopeA.groups.deleteRoleAssignments('grp_b'), 0);
    t.is(await scopeA.groups.delete('grp_b'), 0);
    // Group ids are global (random): the service adds a member only to a group its scope found,
    // and an add through A's scope leaves B's row as it was.
    await scopeA.groups.addMember('grp_b', u.id, now);
    t.is(await scopeB.groups.memberCount('grp_b'), 1);
    t.deepEqual(await scopeA.groups.members('grp_b', { limit: 10 }), []);
    t.like(await scopeB.groups.get('grp_b'), { display_name: 'B group', version: 1 });
    t.deepEqual(
      (await scopeB.groups.members('grp_b', { limit: 10 })).map((m) => [m.user_id, m.email]),
      [[u.id, 'grp-u@example.com']],
    );
    t.deepEqual(
      (await scopeB.groups.ofUser(u.id)).map((x) => x.id),
      ['grp_b'],
    );
    t.true(await scopeB.groups.isMember('grp_b', u.id));
    t.is(await scopeB.groups.count(), 1);
    t.is(await scopeB.groups.deleteRoleAssignments('grp_b'), 1);
  },

  async approvals({ t, b, directory, services, scopeA, scopeB }) {
    const req = await directory.createUser(b.id, { email: 'apr-req@example.com', name: 'Req' }, actor);
    const apv = await directory.createUser(b.id, { email: 'apr-apv@example.com', name: 'Apv' }, actor);
    const service = new ApprovalService(services.ds, new Outbox(services.ds, services.config.secretKey));
    const made = await service.create(
      b.id,
      {
        requester_subject_id: req.id,
        target_subject_id: apv.id,
        requested_action: 'read',
        resource_class: 'mailbox',
        audience: 'aud',
        step_timeout_seconds: 1,
        steps: [{ step_key: 'x', subject_id: apv.id }],
      },
      actor,
      'cli',
    );
    const now = Date.now();
    const stepId = made.approvals[0].id;
    t.is(await scopeA.approvals.getRequest(made.id), undefined);
    t.deepEqual(await scopeA.approvals.listRequests({}, 100), []);
    t.is(await scopeA.approvals.countRequests({}), 0);
    t.deepEqual(await scopeA.approvals.stepsOf([made.id]), []);
    t.deepEqual(await scopeA.approvals.grantsOf([made.id]), []);
    t.deepEqual(await scopeA.approvals.notificationsOf([made.id]), []);
    t.deepEqual(await scopeA.approvals.overdueSteps(made.id, now + 60_000), []);
    t.is(await scopeA.approvals.closeRequest(made.id, 'cancelled', now), 0);
    t.is(
      await scopeA.approvals.decideStep(stepId, {
        status: 'approved',
        reasonCode: '',
        reasonNote: '',
        method: 'x',
        now,
      }),
      0,
    );
    t.is(await scopeA.approvals.closePendingSteps(made.id, 'cancelled', 'x', now), 0);
    t.is(await scopeA.approvals.countNotified(stepId, now), 0);
    // B's request is untouched and still decidable.
    const theirs = (await scopeB.approvals.getRequest(made.id))!;
    t.is(theirs.status, 'pending');
    t.is(await scopeB.approvals.countRequests({}), 1);
    const steps = await scopeB.approvals.stepsOf([made.id]);
    t.is(steps[0].status, 'pending');
    t.is(steps[0].notification_count, 1);
    t.is((await scopeB.approvals.notificationsOf([made.id])).length, 1);
    t.is((await scopeB.approvals.overdueSteps(made.id, now + 60_000)).length, 1);
  },

  async upstreamLoginStates(w) {
    const { t, scopeA, scopeB } = w;
    const { state } = await upstreamOfB(w);
    const now = Date.now();
    t.is(await scopeA.upstreamLoginStates.getByStateHash(state.state_hash), undefined);
    t.is(await scopeA.upstreamLoginStates.consume(state.id, now), 0);
    t.is((await new Lookups(w.services.ds).upstreamLoginStateTenant(state.state_hash))!, w.b.id);
    t.is((await scopeB.upstreamLoginStates.getByStateHash(state.state_hash))!.consumed_at, null);
    t.is(await scopeB.upstreamLoginStates.consume(state.id, now), 1);
  },
  async federationEntities({ t, scopeA, scopeB }) {
    // Tenant B's live inventory of one source: generation 1 with one entity.
    const hash = createHash('sha256').update('https://idp.b.example.org/idp').digest('hex');
    const entity = {
      entity_hash: hash,
      entity_id: 'https://idp.b.example.org/idp',
      roles: ['saml_idp'],
      registration_authority: 'https://fed.example.org/',
      entity_categories: [],
      entity_category_support: [],
      hide_from_discovery: false,
      sirtfi: false,
    };
    await scopeB.federationEntities.insertEntities('fts_b', 1, [entity]);
    const inv = {
      trust_source_id: 'fts_b',
      active_generation: 1,
      valid_until: null,
      cache_duration_seconds: null,
      entity_count: 1,
      signing_fingerprint: 'f'.repeat(64),
      content_hash: 'c'.repeat(64),
      fetched_at: Date.now(),
    };
    await scopeB.federationEntities.putInventory(inv);
    t.is(await scopeA.federationEntities.inventory('fts_b'), undefined);
    t.deepEqual(await scopeA.federationEntities.liveByHash(hash), []);
    t.deepEqual(await scopeA.federationEntities.listLive('fts_b', 10, 0), []);
    t.is(await scopeA.federationEntities.maxGeneration('fts_b'), 0);
    t.is(await scopeA.federationEntities.deleteOtherGenerations('fts_b', 99, 100), 0);
    await scopeA.federationEntities.touchInventory('fts_b', 1);
    // A's own inventory of the same source id is A's row, leaving B's as it was.
    await scopeA.federationEntities.putInventory({ ...inv, active_generation: 7, entity_count: 0 });
    const theirs = (await scopeB.federationEntities.inventory('fts_b'))!;
    t.is(theirs.active_generation, 1);
    t.not(theirs.fetched_at, 1);
    t.is((await scopeB.federationEntities.liveByHash(hash)).length, 1);
    t.is((await scopeB.federationEntities.listLive('fts_b', 10, 0)).length, 1);
  },
  async resourcePermissions(w) {
    const { t, scopeA, scopeB } = w;
    const { api, perm, now } = await rbacOfB(w);
    t.is(await scopeA.resourcePermissions.get(perm.id), undefined);
    t.is(await scopeA.resourcePermissions.byPair(api, perm.permission), undefined);
    t.deepEqual(await scopeA.resourcePermissions.list({ limit: 10 }), []);
    t.deepEqual(await scopeA.resourcePermissions.rolesHolding(perm.id), []);
    t.false(await scopeA.resourcePermissions.resourceRegistered(api), "B's client registers it, not A's");
    t.is(await scopeA.resourcePermissions.remove(perm.id), 0);
    // A's permission of the same pair is A's row.
    await scopeA.resourcePermissions.insert({ ...perm, id: 'perm_a', created_at: now });
    t.is((await scopeA.resourcePermissions.byPair(api, perm.permission))!.id, 'perm_a');
    t.like(await scopeB.resourcePermissions.get(perm.id), { resource: api });
    t.deepEqual(
      (await scopeB.resourcePermissions.list({ limit: 10 })).map((p) => p.id),
      [perm.id],
    );
    t.is((await scopeB.resourcePermissions.rolesHolding(perm.id)).length, 1);
    t.true(await scopeB.resourcePermissions.resourceRegistered(api));
  },
  async roles(w) {
    const { t, scopeA, scopeB } = w;
    const { role, perm, now } = await rbacOfB(w);
    t.is(await scopeA.roles.get(role.id), undefined);
    t.is(await scopeA.roles.byName(role.name), undefined);
    t.deepEqual(await scopeA.roles.list({ limit: 10 }), []);
    t.deepEqual(await scopeA.roles.permissionsOf([role.id]), []);
    t.is(await scopeA.roles.update({ ...role, name: 'A wrote', updated_at: now }), 0);
    t.deepEqual(await scopeA.roles.setPermissions(role.id, [perm.id], now), { removed: 0, added: 0 });
    t.deepEqual(await scopeA.roles.remove(role.id), { deleted: 0, assignments: 0, permissions: 0 });
    t.like(await scopeB.roles.get(role.id), { name: 'Billing', version: 1 });
    t.deepEqual(
      (await scopeB.roles.list({ limit: 10 })).map((r) => r.id),
      [role.id],
    );
    t.deepEqual(
      (await scopeB.roles.permissionsOf([role.id])).map((p) => p.id),
      [perm.id],
    );
    t.is((await scopeB.roleAssignments.list(role.id, { limit: 10 })).length, 3);
  },
  async roleAssignments(w) {
    const { t, scopeA, scopeB } = w;
    const { role, user, group, clientId, now } = await rbacOfB(w);
    const a = { role_id: role.id, principal_type: 'user' as const, principal_id: 'usr_a', created_at: now };
    t.false(await scopeA.roleAssignments.add(a), "no assignment to B's role");
    t.is(await scopeA.roleAssignments.get(role.id, 'user', user.id), undefined);
    t.deepEqual(await scopeA.roleAssignments.list(role.id, { limit: 10 }), []);
    t.deepEqual(await scopeA.roleAssignments.clientsHolding(role.id), []);
    t.false(await scopeA.roleAssignments.groupExists(group));
    t.deepEqual(await scopeA.roleAssignments.ofUser(user.id), []);
    t.is(await scopeA.roleAssignments.remove(role.id, 'user', user.id), 0);
    t.is(await scopeA.roleAssignments.removePrincipal('client', clientId), 0);
    t.is((await scopeB.roleAssignments.list(role.id, { limit: 10 })).length, 3);
    t.is(await scopeB.roleAssignments.get(role.id, 'user', 'usr_a'), undefined);
    t.deepEqual(await scopeB.roleAssignments.clientsHolding(role.id), [clientId]);
    t.true(await scopeB.roleAssignments.groupExists(group));
    t.deepEqual((await scopeB.roleAssignments.ofUser(user.id)).map((x) => x.principal_type).sort(), ['group', 'user']);
  },
  async userErasure(w) {
    const { t, scopeA, scopeB } = w;
    // B's user signed in: a session, a token family, an unredeemed code, an artifact, a consent.
    const { user, familyId } = await signedInB(w);
    const now = Date.now();
    t.is(await scopeA.userErasure.lock(user.id), undefined);
    t.is(await scopeA.userErasure.setStatus(user.id, 'active', 'disabled', now), 0);
    t.deepEqual(await scopeA.userErasure.endEverything(user.id, 'user_disabled', now), { sessions: 0, families: 0 });
    t.deepEqual(await scopeA.userErasure.erase({ id: user.id, email: user.email, status: 'active' }, 'psn_x'), {});
    t.like(await scopeB.userErasure.lock(user.id), { id: user.id, status: 'active' });
    t.is((await scopeB.sessions.listLive(user.id, now, 10)).length, 1);
    t.is((await scopeB.tokens.family(familyId))!.revoked_at, null);
  },
  async scimUsers({ t, directory, b, scopeA, scopeB }) {
    const user = await directory.createUser(b.id, { email: 'scim-b@example.com', name: 'B' }, actor);
    const w = {
      email: 'scim-b@example.com',
      name: 'B',
      standard_claims: null,
      user_name: 'scim-b',
      external_id: 'ext-b',
      scim_attributes: {},
    };
    t.is(await scopeB.scimUsers.update(user.id, w, 2), 1);
    t.is(await scopeA.scimUsers.get(user.id), undefined);
    t.deepEqual(await scopeA.scimUsers.byUserName('scim-b'), []);
    t.is(await scopeA.scimUsers.byExternalId('ext-b'), undefined);
    t.deepEqual(await scopeA.scimUsers.idsByEmail('scim-b@example.com'), []);
    t.deepEqual(await scopeA.scimUsers.page(undefined, 10), []);
    t.deepEqual(await scopeA.scimUsers.slice(0, 10), []);
    t.is(await scopeB.scimUsers.count(), (await scopeB.scimUsers.slice(0, 1000)).length);
    t.is(await scopeA.scimUsers.update(user.id, { ...w, name: 'A was here' }, 3), 0);
    // A's insert is A's: the same userName, externalId and address in A, B's row untouched.
    await scopeA.scimUsers.insert('usr_a_scim', w, 4);
    t.deepEqual(
      (await scopeA.scimUsers.page(undefined, 10)).map((u) => u.id),
      ['usr_a_scim'],
    );
    t.like(await scopeB.scimUsers.get(user.id), { name: 'B', user_name: 'scim-b', external_id: 'ext-b' });
    t.deepEqual(
      (await scopeB.scimUsers.byUserName('SCIM-B')).map((u) => u.id),
      [user.id],
    );
  },
  async userTransfer(w) {
    const { t, scopeA, scopeB } = w;
    const { user, provider } = await upstreamOfB(w);
    const claims = new CustomClaimsService(w.services.ds);
    await claims.createSchema(w.b.id, { field_key: 'team', display_label: 'Team', field_type: 'string' }, actor);
    await claims.setUserClaims(w.b.id, user.id, { claims: { team: 'blue' } }, actor);
    const now = Date.now();
    t.is(await scopeA.userTransfer.byEmail(user.email), undefined);
    t.deepEqual(await scopeA.userTransfer.page('', 10), []);
    t.deepEqual(await scopeA.userTransfer.claimValues([user.id]), []);
    t.deepEqual(await scopeA.userTransfer.links([user.id]), []);
    t.is(await scopeA.userTransfer.updateUser(user.id, { name: 'A wrote', email_verified: 0 }, now), 0);
    // A's insert is A's: a user and a link (to B's provider id) written under A's tenant id only.
    await scopeA.userTransfer.insertUser({ id: 'usr_a_import', email: user.email, name: 'A', email_verified: 0 }, now);
    t.is((await scopeA.userTransfer.byEmail(user.email))!.id, 'usr_a_import');
    const aLink = { id: 'uil_a_import', provider_id: provider.id, user_id: 'usr_a_import', iss: 'x', sub: 'sub-b' };
    await scopeA.userTransfer.insertLink(aLink, now);
    // A's link names B's provider id, but the join is bound to the tenant: not B's provider.
    t.deepEqual(await scopeA.userTransfer.links(['usr_a_import']), []);
    // B's rows as they were.
    t.like(await scopeB.userTransfer.byEmail(user.email), { id: user.id, name: user.name });
    t.deepEqual(
      (await scopeB.userTransfer.page('', 10)).map((u) => u.id),
      [user.id],
    );
    t.deepEqual(await scopeB.userTransfer.claimValues([user.id, 'usr_a_import']), [
      { user_id: user.id, field_key: 'team', value_json: '"blue"' },
    ]);
    t.deepEqual(await scopeB.userTransfer.links([user.id, 'usr_a_import']), [
      { user_id: user.id, issuer: provider.issuer, upstream_sub: 'sub-b' },
    ]);
  },
  async rbacGrants(w) {
    // Tenant B: a group role granting invoices:read on R to a user, and a role held by a client.
    const { t, scopeA, scopeB, directory } = w;
    const R = 'https://api.example.test';
    const user = await directory.createUser(w.b.id, { email: 'rbac-b@example.test', name: 'B' }, actor);
    await seedRbacIn(w.services.ds, w.b.id, {
      permissions: { [R]: ['invoices:read'] },
      groups: { Staff: [user.id] },
      roles: [
        { name: 'Reader', permissions: [{ resource: R, permission: 'invoices:read' }], groups: ['Staff'] },
        { name: 'Bot', resource: R, permissions: [{ resource: R, permission: 'invoices:read' }], clients: ['cl_b'] },
      ],
    });
    const perm = [{ resource: R, permission: 'invoices:read' }];
    t.deepEqual(await scopeA.rbacGrants.permissionsAmong(['invoices:read']), []);
    t.false(await scopeA.rbacGrants.anyPermission());
    t.true(await scopeB.rbacGrants.anyPermission());
    t.deepEqual(await scopeA.rbacGrants.heldByUser(user.id, ['invoices:read']), []);
    t.deepEqual(await scopeA.rbacGrants.heldByClient('cl_b', ['invoices:read']), []);
    t.deepEqual(await scopeA.rbacGrants.roleNamesOfUser(user.id, [R]), []);
    t.deepEqual(await scopeA.rbacGrants.groupNamesOfUser(user.id), []);
    t.deepEqual(await scopeB.rbacGrants.permissionsAmong(['invoices:read']), perm);
    t.deepEqual(await scopeB.rbacGrants.heldByUser(user.id, ['invoices:read']), perm);
    t.deepEqual(await scopeB.rbacGrants.heldByClient('cl_b', ['invoices:read']), perm);
    t.deepEqual(await scopeB.rbacGrants.roleNamesOfUser(user.id, [R]), ['Reader']);
    t.deepEqual(await scopeB.rbacGrants.groupNamesOfUser(user.id), ['Staff']);
  },
};

const getters = Object.entries(Object.getOwnPropertyDescriptors(TenantScope.prototype))
  .filter(([, d]) => typeof d.get === 'function')
  .map(([name]) => name);

test('every repository a TenantScope hands out has an isolation case here', (t) => {
  t.deepEqual([...getters].sort(), Object.keys(cases).sort());
});

test('a TenantScope cannot be made without a tenant id', (t) => {
  t.throws(() => new TenantScope(undefined as never, ''), { message: /tenant id/ });
});

for (const name of getters) {
  test(`${name}: tenant A's scope cannot reach tenant B's rows`, async (t) => {
    const run = cases[name];
    if (!run) return t.fail(`no isolation case for TenantScope.${name}`);
    const db = await testDatabase(t);
    const services = await openServices(db.url, db.dir);
    const { ds, directory, provisioning } = services;
    t.teardown(() => ds.destroy());
    const a = await activeTenant(provisioning, { name: 'A' }, actor);
    const b = await activeTenant(provisioning, { name: 'B' }, actor);
    await run({ t, directory, services, a, b, scopeA: directory.scope(a.id), scopeB: directory.scope(b.id) });
  });
}
