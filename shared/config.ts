/**
 * Configuration from environment variables. Every value is validated once at start-up; an
 * invalid one raises a ConfigError whose message is a single line naming the variable, so an
 * operator reading `journalctl` sees exactly what to fix.
 */
import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync, chmodSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';

export class ConfigError extends Error {
  constructor(
    public readonly variable: string,
    reason: string,
  ) {
    super(`${variable}: ${reason}`);
    this.name = 'ConfigError';
  }
}

/**
 * SQLite's `synchronous` setting in WAL mode (https://sqlite.org/pragma.html#pragma_synchronous):
 * FULL syncs the WAL at every COMMIT, so an acknowledged write survives power loss; NORMAL syncs
 * only at checkpoints, so the last commits before a power loss or OS crash can be lost (an
 * application crash loses nothing either way). Group commit makes FULL one fsync per group.
 */
export type SqliteSynchronous = 'FULL' | 'NORMAL';

export type DatabaseConfig =
  | { kind: 'sqlite'; path: string }
  | {
      kind: 'mysql';
      /** A single-host URL naming the first host (what TypeORM parses). */
      url: string;
      host: string;
      port: number;
      user: string;
      database: string;
      /**
       * Every host the URL lists, in order: `mysql://u:p@h1:3306,h2:3306,h3:3306/db` for the
       * nodes of a Galera cluster. The daemon connects to the first that answers and is ready,
       * and fails over to the next (shared/db/failover.ts). One host for a single server.
       */
      hosts: { host: string; port: number }[];
      /**
       * IAM_GALERA_SYNC_WAIT: wsrep_sync_wait for every session on a Galera node (default 1,
       * causal reads; 0 off). Ignored by a server without wsrep. See shared/db/failover.ts.
       */
      galeraSyncWait?: number;
    };

export interface Config {
  port: number;
  host: string;
  issuer: string;
  database: DatabaseConfig;
  /** IAM_SQLITE_SYNCHRONOUS: FULL (default) or NORMAL; see SqliteSynchronous. */
  sqliteSynchronous: SqliteSynchronous;
  /** Directory for the SQLite file and a generated secret key. */
  dataDir: string;
  smtpUrl: string | undefined;
  /** Envelope and header sender of outgoing mail (IAM_MAIL_FROM, default no-reply@<issuer host>). */
  mailFrom: string;
  /** Raw secret key material; derive purpose-bound keys with shared/crypto.ts. */
  secretKey: string;
  /** Where the secret key came from, for the start-up log (never the key itself). */
  secretKeySource: 'env' | 'file' | 'generated';
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** How long SIGTERM waits for in-flight requests before closing connections. */
  shutdownTimeoutMs: number;
  /** Largest accepted request body, bytes. */
  bodyLimitBytes: number;
  /** How long a retiring signing key stays published after rotation, seconds. */
  keyRetireAfterSeconds: number;
  /** Minimum interval between two sign-in codes for one address in one login transaction, seconds. */
  emailCodeResendSeconds: number;
  /** Entries in the introspection response cache; 0 turns the cache off. */
  introspectionCacheEntries: number;
  /** Largest SAML federation metadata document the poller downloads, bytes (IAM_FEDERATION_METADATA_MAX_BYTES). */
  federationMetadataMaxBytes: number;
  /**
   * Total time one metadata document may take, download and signature pass together, seconds
   * (IAM_FEDERATION_METADATA_DEADLINE_SECONDS): a server that drips bytes just fast enough to
   * beat the idle timeout is cut off here (docs/federation.md, "Polling").
   */
  federationMetadataDeadlineSeconds: number;
  /** Metadata polls in flight at once, shared fairly between tenants (IAM_FEDERATION_POLL_CONCURRENCY). */
  federationPollConcurrency: number;
  /** Trust sources with `polling.mode: automatic` a tenant may have (IAM_FEDERATION_MAX_AUTOMATIC_SOURCES). */
  federationMaxAutomaticSources: number;
  /**
   * Outbound requests (ID-JAG issuer discovery) may reach 127.0.0.0/8 and ::1. Off by default;
   * for tests and local development only (IAM_OUTBOUND_ALLOW_LOOPBACK).
   */
  outboundAllowLoopback: boolean;
  /** Extra CA certificates (PEM) trusted by outbound HTTPS besides Node's roots (IAM_OUTBOUND_CA_FILE). */
  outboundCaFile: string | undefined;
  outboundCaPem: string | undefined;
  /** Least time between two key-set refetches of one ID-JAG issuer caused by an unknown `kid`, seconds. */
  idJagJwksCooldownSeconds: number;
  /** Least time between two refetches of a private_key_jwt client's jwks_uri caused by an unknown `kid`, seconds. */
  clientJwksCooldownSeconds: number;
  /** HTTP worker processes sharing the listening socket (IAM_WORKERS; `auto` = one per CPU). */
  workers: number;
  /**
   * Least time between a recovered tenant's successful binding smoke checks and its
   * reactivation, seconds (IAM_RECOVERY_STABILIZATION_SECONDS; docs/recovery.md).
   */
  recoveryStabilizationSeconds: number;
  /** Failed attempts of one provisioning step before its operation is `blocked` (docs/provisioning.md). */
  provisioningMaxAttempts: number;
  /** Backoff before the first retry of a failed provisioning step, ms; doubles per failure, capped at 5 min. */
  provisioningRetryBaseMs: number;
  /** Custom claim rename (docs/claims.md, "Rename"): users per batch, pause between batches (ms), lease (ms). */
  claimRename: { batchSize: number; batchPauseMs: number; leaseMs: number };
  /**
   * IAM_TRUSTED_PROXIES: the reverse proxies whose X-Forwarded-For and X-Forwarded-Proto are
   * believed, as CIDR ranges in `address/prefix` form (a bare address is a /32 or /128). Empty
   * by default: the socket peer is the client. See docs/deployment.md.
   */
  trustedProxies: string[];
  /** Sign-in and client-authentication budgets (docs/security.md has the arithmetic). */
  throttle: ThrottleConfig;
  /**
   * IAM_METRICS_PORT: the Prometheus /metrics listener's port (docs/metrics.md); undefined =
   * no listener and no metrics recorded, 0 = an ephemeral port (logged).
   */
  metricsPort: number | undefined;
  /** IAM_METRICS_HOST: its address, 127.0.0.1 by default (the series show the traffic's shape). */
  metricsHost: string;
}

/**
 * The throttling budgets, each `IAM_THROTTLE_*` overridable. Windows are seconds. A budget
 * of 0 turns that budget off (for a test or an operator who throttles at a proxy instead).
 */
export interface ThrottleConfig {
  /** Failed code checks per address across transactions before the address locks. */
  addressFailures: number;
  /** Window of those failures. */
  addressFailureWindowSeconds: number;
  /** First lock; each further lock within a day doubles it, up to a day. */
  addressLockSeconds: number;
  /** Codes one address may be sent per hour. */
  addressMailPerHour: number;
  /** Code sends per IP per window. */
  ipSends: number;
  /** Code checks per IP per window. */
  ipVerifies: number;
  /** Login form posts (/login/email-code, /login/verify) per IP per window. */
  ipFormPosts: number;
  /** Window of the per-IP budgets. */
  ipWindowSeconds: number;
  /** Code sends per tenant per minute. */
  tenantSendsPerMinute: number;
  /** Code checks per tenant per minute. */
  tenantVerifiesPerMinute: number;
  /** Failed client authentications per client per window (/token, /revoke, /introspect). */
  clientAuthFailures: number;
  /** Failed client authentications per IP per window. */
  clientAuthIpFailures: number;
  /** Window of the client-authentication budgets, and how long a spent one blocks. */
  clientAuthWindowSeconds: number;
}

export const MIN_SECRET_KEY_LENGTH = 32;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function intVar(env: NodeJS.ProcessEnv, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** The IAM_THROTTLE_* variables; the defaults and their arithmetic are in docs/security.md. */
function throttleConfig(env: NodeJS.ProcessEnv): ThrottleConfig {
  const v = (name: string, def: number, max: number, min = 0) => intVar(env, `IAM_THROTTLE_${name}`, def, min, max);
  return {
    addressFailures: v('ADDRESS_FAILURES', 10, 1000),
    addressFailureWindowSeconds: v('ADDRESS_FAILURE_WINDOW_SECONDS', 86_400, 7 * 86_400, 1),
    addressLockSeconds: v('ADDRESS_LOCK_SECONDS', 900, 86_400, 1),
    addressMailPerHour: v('ADDRESS_MAIL_PER_HOUR', 10, 10_000_000),
    ipSends: v('IP_SENDS', 60, 10_000_000),
    ipVerifies: v('IP_VERIFIES', 120, 10_000_000),
    ipFormPosts: v('IP_FORM_POSTS', 120, 10_000_000),
    ipWindowSeconds: v('IP_WINDOW_SECONDS', 600, 86_400, 1),
    tenantSendsPerMinute: v('TENANT_SENDS_PER_MINUTE', 600, 10_000_000),
    tenantVerifiesPerMinute: v('TENANT_VERIFIES_PER_MINUTE', 1200, 10_000_000),
    clientAuthFailures: v('CLIENT_AUTH_FAILURES', 100, 10_000_000),
    clientAuthIpFailures: v('CLIENT_AUTH_IP_FAILURES', 30, 10_000_000),
    clientAuthWindowSeconds: v('CLIENT_AUTH_WINDOW_SECONDS', 900, 86_400, 1),
  };
}

/** IAM_WORKERS: 1 to 64 processes, or `auto` for one per CPU the process may use. */
function workersVar(env: NodeJS.ProcessEnv): number {
  const raw = env.IAM_WORKERS?.trim();
  if (raw === 'auto') return Math.min(64, availableParallelism());
  if (raw && !/^\d+$/.test(raw))
    throw new ConfigError('IAM_WORKERS', `must be a whole number from 1 to 64 or "auto", got "${env.IAM_WORKERS}"`);
  return intVar(env, 'IAM_WORKERS', 1, 1, 64);
}

function boolVar(env: NodeJS.ProcessEnv, name: string, def: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return def;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `must be true or false, got "${env[name]}"`);
}

/** Reads a PEM bundle of CA certificates and checks that it holds at least one certificate. */
function loadCaFile(env: NodeJS.ProcessEnv, cwd: string): { file: string | undefined; pem: string | undefined } {
  const name = 'IAM_OUTBOUND_CA_FILE';
  const raw = env[name]?.trim();
  if (!raw) return { file: undefined, pem: undefined };
  const file = resolve(cwd, raw);
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (e) {
    throw new ConfigError(name, `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new ConfigError(name, `${file} holds no PEM certificate`);
  try {
    new X509Certificate(pem);
  } catch {
    throw new ConfigError(name, `${file} is not a valid PEM certificate`);
  }
  return { file, pem };
}

export function parseDatabaseUrl(raw: string, cwd = process.cwd()): DatabaseConfig {
  const name = 'IAM_DATABASE_URL';
  if (raw.startsWith('sqlite:')) {
    let path = raw.slice('sqlite:'.length);
    if (path.startsWith('//')) path = path.slice(2); // accept sqlite:///abs/path as well
    if (!path) throw new ConfigError(name, 'sqlite: needs a file path, for example sqlite:var/iam.db');
    return { kind: 'sqlite', path: isAbsolute(path) ? path : resolve(cwd, path) };
  }
  if (raw.startsWith('mysql://') || raw.startsWith('mariadb://')) {
    // WHATWG URLs hold one host, so a host list is split off first and each host is checked on
    // its own (the first one becomes the URL TypeORM parses).
    const m = /^(?:mysql|mariadb):\/\/([^/?#]*)(.*)$/s.exec(raw)!;
    const at = m[1].lastIndexOf('@');
    const userinfo = at >= 0 ? m[1].slice(0, at + 1) : '';
    const hostList = m[1].slice(at + 1).split(',');
    const hosts: { host: string; port: number }[] = [];
    let first: URL | undefined;
    for (const [i, h] of hostList.entries()) {
      if (!h) throw new ConfigError(name, `has an empty host in its host list (host ${i + 1})`);
      let u: URL;
      try {
        u = new URL(`mysql://${userinfo}${h}${m[2]}`);
      } catch {
        throw new ConfigError(
          name,
          hostList.length > 1
            ? `host ${i + 1} ("${h}") is not a valid host[:port] (expected mysql://user:pass@h1:port,h2:port/db)`
            : 'is not a valid URL (expected mysql://user:pass@host:port/db)',
        );
      }
      if (!u.hostname) throw new ConfigError(name, 'has no host (expected mysql://user:pass@host:port/db)');
      // An IPv6 literal keeps its brackets in a URL, but not in a socket address.
      hosts.push({ host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: u.port ? Number(u.port) : 3306 });
      first ??= u;
    }
    const u = first!;
    const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
    if (!database) throw new ConfigError(name, 'has no database name (expected mysql://user:pass@host:port/db)');
    const seen = new Set(hosts.map((h) => `${h.host}:${h.port}`));
    if (seen.size !== hosts.length) throw new ConfigError(name, 'lists the same host:port twice');
    return {
      kind: 'mysql',
      url: u.toString(),
      host: u.hostname,
      port: u.port ? Number(u.port) : 3306,
      user: decodeURIComponent(u.username),
      database,
      hosts,
    };
  }
  throw new ConfigError(name, `must start with sqlite: or mysql://, got "${raw.split(':')[0]}:..."`);
}

/**
 * A bare addr-spec (RFC 5322 §3.4.1) with a dot-atom local part and a host name (single-label
 * names such as `localhost` allowed) or an address literal. No display name, no whitespace, so
 * nothing can break out of the header it is written into.
 */
const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const MAILBOX = new RegExp(`^${ATEXT}(?:\\.${ATEXT})*@(?:${LABEL}(?:\\.${LABEL})*|\\[[0-9A-Fa-f:.]+\\])$`);
export const isMailbox = (v: string): boolean => v.length <= 254 && MAILBOX.test(v);

/** Reads the secret key from the environment, or from (or into) the data directory. */
function loadSecretKey(env: NodeJS.ProcessEnv, dataDir: string): Pick<Config, 'secretKey' | 'secretKeySource'> {
  const fromEnv = env.IAM_SECRET_KEY;
  if (fromEnv !== undefined && fromEnv !== '') {
    if (fromEnv.length < MIN_SECRET_KEY_LENGTH) {
      throw new ConfigError(
        'IAM_SECRET_KEY',
        `is too short: at least ${MIN_SECRET_KEY_LENGTH} characters are required ` +
          '(generate one with: openssl rand -base64 32)',
      );
    }
    return { secretKey: fromEnv, secretKeySource: 'env' };
  }
  const file = join(dataDir, 'secret.key');
  if (existsSync(file)) {
    const key = readFileSync(file, 'utf8').trim();
    if (key.length < MIN_SECRET_KEY_LENGTH) {
      throw new ConfigError(
        'IAM_SECRET_KEY',
        `the key file ${file} holds fewer than ${MIN_SECRET_KEY_LENGTH} characters`,
      );
    }
    return { secretKey: key, secretKeySource: 'file' };
  }
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const key = randomBytes(32).toString('base64url');
    // 'wx' fails if another process created the file first; then read theirs.
    try {
      writeFileSync(file, key + '\n', { mode: 0o600, flag: 'wx' });
      chmodSync(file, 0o600);
      return { secretKey: key, secretKeySource: 'generated' };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return loadSecretKey(env, dataDir);
      throw e;
    }
  } catch (e) {
    throw new ConfigError('IAM_SECRET_KEY', `is unset and no key could be written to ${file}: ${(e as Error).message}`);
  }
}

/**
 * IAM_TRUSTED_PROXIES: comma-separated IPv4 and IPv6 CIDR ranges (`10.0.0.0/8`, `::1/128`, or
 * a bare address). Each is checked here, so a typo stops the start with the entry named rather
 * than silently trusting nothing (or the wrong hop).
 */
export function parseTrustedProxies(raw: string | undefined): string[] {
  const name = 'IAM_TRUSTED_PROXIES';
  const out: string[] = [];
  for (const entry of (raw ?? '').split(',')) {
    const e = entry.trim();
    if (!e) continue;
    const m = /^([^/\s]+?)(?:\/([0-9]{1,3}))?$/.exec(e);
    const family = m ? isIP(m[1]) : 0;
    if (!m || family === 0)
      throw new ConfigError(name, `"${e}" is not an IP address or CIDR range (e.g. 10.0.0.0/8, fd00::/8, 127.0.0.1)`);
    const max = family === 4 ? 32 : 128;
    const prefix = m[2] === undefined ? max : Number(m[2]);
    if (prefix > max) throw new ConfigError(name, `"${e}": the prefix length must be 0 to ${max}`);
    out.push(`${m[1]}/${prefix}`);
  }
  return out;
}

/**
 * IAM_METRICS_PORT and IAM_METRICS_HOST (docs/metrics.md). The metrics listener is a second
 * socket, so it cannot share the service's port; a host without a port would be a listener the
 * operator believes is there and is not, so it is refused rather than ignored.
 */
export function metricsListenerConfig(
  env: NodeJS.ProcessEnv,
  servicePort: number,
): Pick<Config, 'metricsPort' | 'metricsHost'> {
  const rawPort = env.IAM_METRICS_PORT?.trim();
  const rawHost = env.IAM_METRICS_HOST?.trim();
  if (!rawPort) {
    if (rawHost)
      throw new ConfigError('IAM_METRICS_HOST', 'is set but IAM_METRICS_PORT is not: set the port to serve /metrics');
    return { metricsPort: undefined, metricsHost: '127.0.0.1' };
  }
  if (!/^\d+$/.test(rawPort))
    throw new ConfigError('IAM_METRICS_PORT', `must be a port number from 0 to 65535, got "${env.IAM_METRICS_PORT}"`);
  const metricsPort = Number(rawPort);
  if (metricsPort > 65535)
    throw new ConfigError('IAM_METRICS_PORT', `must be a port number from 0 to 65535, got ${metricsPort}`);
  if (metricsPort !== 0 && metricsPort === servicePort)
    throw new ConfigError(
      'IAM_METRICS_PORT',
      `must differ from IAM_PORT (${servicePort}): /metrics has its own listener`,
    );
  const metricsHost = rawHost || '127.0.0.1';
  if (!/^[A-Za-z0-9.:_-]+$/.test(metricsHost) && metricsHost !== '::')
    throw new ConfigError('IAM_METRICS_HOST', `is not a host name or address: "${metricsHost}"`);
  return { metricsPort, metricsHost };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Config {
  const port = intVar(env, 'IAM_PORT', 8080, 0, 65535);
  const host = env.IAM_HOST?.trim() || '127.0.0.1';
  if (!/^[A-Za-z0-9.:_-]+$/.test(host) && host !== '::')
    throw new ConfigError('IAM_HOST', `is not a host name or address: "${host}"`);

  const issuerRaw = env.IAM_ISSUER?.trim() || `http://localhost:${port}`;
  let issuerUrl: URL;
  try {
    issuerUrl = new URL(issuerRaw);
  } catch {
    throw new ConfigError('IAM_ISSUER', `is not a URL: "${issuerRaw}"`);
  }
  // OpenID Connect Discovery §3: the issuer is an https URL with no query or fragment
  // (http is tolerated for local development).
  if (issuerUrl.protocol !== 'https:' && issuerUrl.protocol !== 'http:')
    throw new ConfigError('IAM_ISSUER', 'must be an http or https URL');
  if (issuerUrl.search || issuerUrl.hash) throw new ConfigError('IAM_ISSUER', 'must not have a query or fragment');
  if (issuerUrl.username || issuerUrl.password) throw new ConfigError('IAM_ISSUER', 'must not carry credentials');
  const issuer = issuerUrl.toString().replace(/\/$/, '');

  const database = parseDatabaseUrl(env.IAM_DATABASE_URL?.trim() || 'sqlite:var/iam.db', cwd);
  // wsrep_sync_wait is a bitmask of statement kinds (1 reads, 2 UPDATE/DELETE, 4 INSERT/REPLACE, 8 SHOW).
  if (database.kind === 'mysql') database.galeraSyncWait = intVar(env, 'IAM_GALERA_SYNC_WAIT', 1, 0, 15);
  const dataDir = env.IAM_DATA_DIR?.trim()
    ? resolve(cwd, env.IAM_DATA_DIR.trim())
    : database.kind === 'sqlite'
      ? dirname(database.path)
      : resolve(cwd, 'var');

  const smtpUrl = env.IAM_SMTP_URL?.trim() || undefined;
  if (smtpUrl) {
    let u: URL | undefined;
    try {
      u = new URL(smtpUrl);
    } catch {
      /* reported below */
    }
    if (!u || !['smtp:', 'smtps:'].includes(u.protocol))
      throw new ConfigError('IAM_SMTP_URL', 'must be an smtp:// or smtps:// URL');
  }

  // A bare address: it is both the SMTP envelope sender (RFC 5321 §4.1.2 reverse-path) and the
  // From header, and a display name with quotes would need its own quoting rules here.
  const mailFrom = env.IAM_MAIL_FROM?.trim() || `no-reply@${issuerUrl.hostname}`;
  if (env.IAM_MAIL_FROM?.trim() && !isMailbox(mailFrom)) {
    throw new ConfigError(
      'IAM_MAIL_FROM',
      `must be an email address such as no-reply@example.com, got ${JSON.stringify(mailFrom)}`,
    );
  }
  // The default is only as good as the issuer's host name (one with an underscore is not a
  // mail domain). With SMTP on, every message would be refused by the composer, so say so now.
  if (smtpUrl && !isMailbox(mailFrom)) {
    throw new ConfigError(
      'IAM_MAIL_FROM',
      `must be set: the default sender ${JSON.stringify(mailFrom)}, made from IAM_ISSUER's host, ` +
        'is not an email address',
    );
  }

  const logLevel = (env.IAM_LOG_LEVEL?.trim() || 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError('IAM_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${env.IAM_LOG_LEVEL}"`);

  const outboundCa = loadCaFile(env, cwd);

  const synchronous = (env.IAM_SQLITE_SYNCHRONOUS?.trim() || 'FULL').toUpperCase();
  if (synchronous !== 'FULL' && synchronous !== 'NORMAL') {
    throw new ConfigError('IAM_SQLITE_SYNCHRONOUS', `must be FULL or NORMAL, got "${env.IAM_SQLITE_SYNCHRONOUS}"`);
  }

  return {
    port,
    host,
    issuer,
    database,
    sqliteSynchronous: synchronous,
    dataDir,
    smtpUrl,
    mailFrom,
    ...loadSecretKey(env, dataDir),
    logLevel,
    shutdownTimeoutMs: intVar(env, 'IAM_SHUTDOWN_TIMEOUT_MS', 10_000, 0, 300_000),
    bodyLimitBytes: intVar(env, 'IAM_BODY_LIMIT_BYTES', 100 * 1024, 1024, 50 * 1024 * 1024),
    keyRetireAfterSeconds: intVar(env, 'IAM_KEY_RETIRE_AFTER_SECONDS', 86_400, 60, 90 * 86_400),
    emailCodeResendSeconds: intVar(env, 'IAM_EMAIL_CODE_RESEND_SECONDS', 30, 0, 3600),
    introspectionCacheEntries: intVar(env, 'IAM_INTROSPECTION_CACHE_ENTRIES', 100_000, 0, 10_000_000),
    federationMetadataMaxBytes: intVar(
      env,
      'IAM_FEDERATION_METADATA_MAX_BYTES',
      200 * 1024 * 1024,
      1024,
      2 * 1024 ** 3,
    ),
    federationMetadataDeadlineSeconds: intVar(env, 'IAM_FEDERATION_METADATA_DEADLINE_SECONDS', 120, 5, 3600),
    federationPollConcurrency: intVar(env, 'IAM_FEDERATION_POLL_CONCURRENCY', 4, 1, 32),
    federationMaxAutomaticSources: intVar(env, 'IAM_FEDERATION_MAX_AUTOMATIC_SOURCES', 20, 0, 1000),
    outboundAllowLoopback: boolVar(env, 'IAM_OUTBOUND_ALLOW_LOOPBACK', false),
    outboundCaFile: outboundCa.file,
    outboundCaPem: outboundCa.pem,
    idJagJwksCooldownSeconds: intVar(env, 'IAM_IDJAG_JWKS_COOLDOWN_SECONDS', 30, 0, 3600),
    clientJwksCooldownSeconds: intVar(env, 'IAM_CLIENT_JWKS_COOLDOWN_SECONDS', 30, 0, 3600),
    workers: workersVar(env),
    recoveryStabilizationSeconds: intVar(env, 'IAM_RECOVERY_STABILIZATION_SECONDS', 300, 0, 30 * 86_400),
    provisioningMaxAttempts: intVar(env, 'IAM_PROVISIONING_MAX_ATTEMPTS', 5, 1, 100),
    // At least 10 ms (a zero backoff would spin on a dead dependency), at most the 5 min cap.
    provisioningRetryBaseMs: intVar(env, 'IAM_PROVISIONING_RETRY_BASE_MS', 5_000, 10, 300_000),
    claimRename: {
      batchSize: intVar(env, 'IAM_CLAIM_RENAME_BATCH_SIZE', 500, 1, 10_000),
      batchPauseMs: intVar(env, 'IAM_CLAIM_RENAME_BATCH_PAUSE_MS', 0, 0, 60_000),
      // At least 2 s: a batch renews it, and a batch must fit well inside it.
      leaseMs: intVar(env, 'IAM_CLAIM_RENAME_LEASE_MS', 15_000, 2_000, 300_000),
    },
    trustedProxies: parseTrustedProxies(env.IAM_TRUSTED_PROXIES),
    throttle: throttleConfig(env),
    ...metricsListenerConfig(env, port),
  };
}
