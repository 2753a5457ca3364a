/**
 * Configuration from environment variables. Every value is validated once at start-up; an
 * invalid one raises a ConfigError whose message is a single line naming the variable, so an
 * operator reading `journalctl` sees exactly what to fix.
 *
 * loadConfig and the Config it returns are here; the parsers of the larger areas are in
 * shared/config/ (database URL, secret key, throttle budgets, proxies and listeners), each
 * importable from here as before.
 */
import { dirname, resolve } from 'node:path';
import { availableParallelism } from 'node:os';
import { parseDatabaseUrl, type DatabaseConfig, type SqliteSynchronous } from './config/database.js';
import { loadCaFile, metricsListenerConfig, parseTrustedProxies } from './config/network.js';
import { loadSecretKey, type SecretKeySource } from './config/secret-key.js';
import { throttleConfig, type ThrottleConfig } from './config/throttle.js';
import { boolVar, ConfigError, intVar } from './config/vars.js';

export { parseDatabaseUrl, type DatabaseConfig, type SqliteSynchronous } from './config/database.js';
export { metricsListenerConfig, parseTrustedProxies } from './config/network.js';
export { MIN_SECRET_KEY_LENGTH } from './config/secret-key.js';
export type { ThrottleConfig } from './config/throttle.js';
export { ConfigError } from './config/vars.js';

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
  /**
   * IAM_MAIL_LOG=1: the log email provider stays in the default provider order behind SMTP
   * (mail, login codes included, may reach the log). Off by default: with SMTP configured no
   * mail is written to the log unless a tenant's order names `log` (docs/email.md).
   */
  mailLog: boolean;
  /** Envelope and header sender of outgoing mail (IAM_MAIL_FROM, default no-reply@<issuer host>). */
  mailFrom: string;
  /** Raw secret key material; derive purpose-bound keys with shared/crypto.ts. */
  secretKey: string;
  /** Where the secret key came from, for the start-up log (never the key itself). */
  secretKeySource: SecretKeySource;
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
  /**
   * How long an offboarded tenant stays restorable before the purge deletes its rows, seconds
   * (IAM_TENANT_PURGE_GRACE_SECONDS, default 7 days; docs/tenant-lifecycle.md, "Offboarding").
   */
  tenantPurgeGraceSeconds: number;
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
  /** IAM_CONSOLE: `off` removes the operator console (/console answers 404; docs/console.md). */
  console?: boolean;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** IAM_WORKERS: 1 to 64 processes, or `auto` for one per CPU the process may use. */
function workersVar(env: NodeJS.ProcessEnv): number {
  const raw = env.IAM_WORKERS?.trim();
  if (raw === 'auto') return Math.min(64, availableParallelism());
  if (raw && !/^\d+$/.test(raw))
    throw new ConfigError('IAM_WORKERS', `must be a whole number from 1 to 64 or "auto", got "${env.IAM_WORKERS}"`);
  return intVar(env, 'IAM_WORKERS', 1, 1, 64);
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

/** Where no IAM_DATABASE_URL is set: a SQLite file under the working directory. */
/**
 * The database when IAM_DATABASE_URL is unset: a SQLite file in the data directory (IAM_DATA_DIR,
 * else var/), beside the secret key it was set up with, so that setting only IAM_DATA_DIR (a
 * container's volume) does not leave the database behind in the working directory.
 */
export const defaultDatabaseUrl = (env: NodeJS.ProcessEnv = process.env): string =>
  `sqlite:${env.IAM_DATA_DIR?.trim() || 'var'}/iam.db`;

/**
 * IAM_DATABASE_URL (or the default) alone, without the rest of loadConfig: the CLI looks for
 * the database before loadConfig may write a secret key beside it (cli/base.ts).
 */
export function databaseFromEnv(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): DatabaseConfig {
  return parseDatabaseUrl(env.IAM_DATABASE_URL?.trim() || defaultDatabaseUrl(env), cwd);
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

  const database = databaseFromEnv(env, cwd);
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
    mailLog: boolVar(env, 'IAM_MAIL_LOG', false),
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
    // 0 is allowed (a test, or an operator who wants no grace); at most a year.
    tenantPurgeGraceSeconds: intVar(env, 'IAM_TENANT_PURGE_GRACE_SECONDS', 7 * 86_400, 0, 366 * 86_400),
    claimRename: {
      batchSize: intVar(env, 'IAM_CLAIM_RENAME_BATCH_SIZE', 500, 1, 10_000),
      batchPauseMs: intVar(env, 'IAM_CLAIM_RENAME_BATCH_PAUSE_MS', 0, 0, 60_000),
      // At least 2 s: a batch renews it, and a batch must fit well inside it.
      leaseMs: intVar(env, 'IAM_CLAIM_RENAME_LEASE_MS', 15_000, 2_000, 300_000),
    },
    trustedProxies: parseTrustedProxies(env.IAM_TRUSTED_PROXIES),
    throttle: throttleConfig(env),
    ...metricsListenerConfig(env, port),
    console: env.IAM_CONSOLE?.trim().toLowerCase() !== 'off',
  };
}
