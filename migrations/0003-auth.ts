import type { MigrationInterface, QueryRunner } from 'typeorm';
import { runAll, tableSuffix } from './dialect.js';

/**
 * The login and token model: authorization requests, email codes, browser sessions,
 * direct-auth artifacts, authorization codes, token families with rotating refresh tokens,
 * consents and the authentication history. Secrets (codes, cookies, tokens) are stored only
 * as hashes; rows hold the hash as their key so a lookup is one indexed read.
 */
export class Auth1763769600003 implements MigrationInterface {
  name = 'Auth1763769600003';

  async up(qr: QueryRunner): Promise<void> {
    const x = tableSuffix(qr);
    await runAll(qr, [
      `CREATE TABLE auth_requests (
        id VARCHAR(64) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        client_id VARCHAR(128) NOT NULL,
        params TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        consumed_at BIGINT NULL
      )${x}`,
      `CREATE INDEX ix_auth_requests_expiry ON auth_requests (expires_at)`,
      `CREATE TABLE email_codes (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        email VARCHAR(320) NOT NULL,
        user_id VARCHAR(40) NULL,
        client_id VARCHAR(128) NOT NULL,
        code_hash VARCHAR(128) NOT NULL,
        attempts INTEGER NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        consumed_at BIGINT NULL
      )${x}`,
      `CREATE INDEX ix_email_codes_live ON email_codes (tenant_id, email, consumed_at)`,
      `CREATE TABLE sessions (
        id VARCHAR(64) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        user_id VARCHAR(40) NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        auth_time BIGINT NOT NULL,
        acr VARCHAR(64) NOT NULL,
        amr TEXT NOT NULL,
        user_agent VARCHAR(512) NULL,
        ip VARCHAR(64) NULL,
        last_seen_at BIGINT NOT NULL,
        revoked_at BIGINT NULL
      )${x}`,
      `CREATE INDEX ix_sessions_user ON sessions (tenant_id, user_id, created_at)`,
      `CREATE TABLE direct_auth_artifacts (
        id VARCHAR(64) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        client_id VARCHAR(128) NOT NULL,
        user_id VARCHAR(40) NOT NULL,
        channel VARCHAR(32) NOT NULL,
        provider_id VARCHAR(64) NOT NULL,
        code_challenge VARCHAR(128) NOT NULL,
        auth_request_id VARCHAR(64) NULL,
        auth_time BIGINT NOT NULL,
        amr TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        consumed_at BIGINT NULL
      )${x}`,
      `CREATE TABLE token_families (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        user_id VARCHAR(40) NULL,
        client_id VARCHAR(128) NOT NULL,
        session_id VARCHAR(64) NULL,
        consent_id VARCHAR(40) NULL,
        scope TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        revoked_at BIGINT NULL,
        revoked_reason VARCHAR(64) NULL
      )${x}`,
      `CREATE INDEX ix_families_user ON token_families (tenant_id, user_id)`,
      `CREATE INDEX ix_families_session ON token_families (session_id)`,
      `CREATE TABLE auth_codes (
        id VARCHAR(64) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        client_id VARCHAR(128) NOT NULL,
        user_id VARCHAR(40) NOT NULL,
        session_id VARCHAR(64) NOT NULL,
        family_id VARCHAR(40) NOT NULL,
        redirect_uri TEXT NOT NULL,
        scope TEXT NOT NULL,
        nonce VARCHAR(512) NULL,
        code_challenge VARCHAR(128) NOT NULL,
        auth_time BIGINT NOT NULL,
        acr VARCHAR(64) NOT NULL,
        amr TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        consumed_at BIGINT NULL
      )${x}`,
      `CREATE TABLE refresh_tokens (
        id VARCHAR(64) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        family_id VARCHAR(40) NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        consumed_at BIGINT NULL
      )${x}`,
      `CREATE INDEX ix_refresh_family ON refresh_tokens (family_id)`,
      `CREATE TABLE consents (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        user_id VARCHAR(40) NOT NULL,
        client_id VARCHAR(128) NOT NULL,
        scopes TEXT NOT NULL,
        granted_at BIGINT NOT NULL,
        expires_at BIGINT NULL,
        privacy_policy_version VARCHAR(64) NULL,
        tos_version VARCHAR(64) NULL,
        consent_version INTEGER NOT NULL,
        revoked_at BIGINT NULL
      )${x}`,
      `CREATE INDEX ix_consents_user ON consents (tenant_id, user_id, client_id)`,
      `CREATE TABLE auth_history (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        user_id VARCHAR(40) NULL,
        event VARCHAR(32) NOT NULL,
        outcome VARCHAR(16) NOT NULL,
        reason VARCHAR(64) NULL,
        client_id VARCHAR(128) NULL,
        ip VARCHAR(64) NULL,
        user_agent VARCHAR(512) NULL,
        created_at BIGINT NOT NULL
      )${x}`,
      `CREATE INDEX ix_auth_history_user ON auth_history (tenant_id, user_id, created_at)`,
      // RFC 7009 revocation of a single access token, by jti, kept until the token expires.
      `CREATE TABLE revoked_access_tokens (
        jti VARCHAR(64) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        expires_at BIGINT NOT NULL,
        revoked_at BIGINT NOT NULL
      )${x}`,
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    await runAll(
      qr,
      [
        'revoked_access_tokens',
        'auth_history',
        'consents',
        'refresh_tokens',
        'auth_codes',
        'token_families',
        'direct_auth_artifacts',
        'sessions',
        'email_codes',
        'auth_requests',
      ].map((t) => `DROP TABLE ${t}`),
    );
  }
}
