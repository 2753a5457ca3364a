import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMysql, runAll, tableSuffix } from './dialect.js';

/**
 * The access graph and approval requests (docs/approvals.md):
 * - `user_relationships`: typed, optionally expiring edges between two users of one tenant;
 *   one edge per (subject, related, type), enforced by the database.
 * - `approval_requests`, `approval_steps`, `approval_grants`: a request, the approvers' steps
 *   (one per step_key) and the grant issued when every step approved.
 * - `approval_notifications`: each attempt to notify a step's approver (the outbox entry it wrote).
 * The (status, expires_at) index of the steps serves the expiry job's scan.
 */
export class Approvals1763769600022 implements MigrationInterface {
  name = 'Approvals1763769600022';

  async up(qr: QueryRunner): Promise<void> {
    const text = isMysql(qr) ? 'MEDIUMTEXT' : 'TEXT';
    await runAll(qr, [
      `CREATE TABLE user_relationships (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        subject_id VARCHAR(40) NOT NULL,
        related_subject_id VARCHAR(40) NOT NULL,
        relationship_type VARCHAR(80) NOT NULL,
        expires_at BIGINT NULL,
        created_at BIGINT NOT NULL,
        CONSTRAINT uq_user_relationships_edge UNIQUE (tenant_id, subject_id, related_subject_id, relationship_type)
      )${tableSuffix(qr)}`,
      'CREATE INDEX ix_user_relationships_related ON user_relationships (tenant_id, related_subject_id)',
      `CREATE TABLE approval_requests (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        public_request_id VARCHAR(40) NOT NULL,
        investigation_id VARCHAR(128) NOT NULL,
        requester_subject_type VARCHAR(32) NOT NULL,
        requester_subject_id VARCHAR(128) NOT NULL,
        target_subject_type VARCHAR(32) NOT NULL,
        target_subject_id VARCHAR(128) NOT NULL,
        request_surface VARCHAR(32) NOT NULL,
        requested_action VARCHAR(128) NOT NULL,
        resource_class VARCHAR(128) NOT NULL,
        audience VARCHAR(512) NOT NULL,
        redaction_level VARCHAR(32) NOT NULL,
        status VARCHAR(16) NOT NULL,
        scope_canonical ${text} NOT NULL,
        scope_json ${text} NOT NULL,
        reason_code VARCHAR(64) NOT NULL,
        reason_note ${text} NOT NULL,
        reference_id VARCHAR(128) NOT NULL,
        reuse_scope VARCHAR(32) NOT NULL,
        policy_preset VARCHAR(64) NOT NULL,
        resolved_policy ${text} NOT NULL,
        attributes ${text} NOT NULL,
        reference_json ${text} NOT NULL,
        ticket_reference_json ${text} NOT NULL,
        resource_ids ${text} NOT NULL,
        detail_classes ${text} NOT NULL,
        dataset ${text} NULL,
        partial_access_allowed INTEGER NOT NULL,
        has_detail INTEGER NOT NULL,
        grant_ttl_ms BIGINT NOT NULL,
        requested_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        decided_at BIGINT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        CONSTRAINT uq_approval_requests_public UNIQUE (tenant_id, public_request_id)
      )${tableSuffix(qr)}`,
      'CREATE INDEX ix_approval_requests_list ON approval_requests (tenant_id, status, created_at)',
      'CREATE INDEX ix_approval_requests_investigation ON approval_requests (tenant_id, investigation_id)',
      `CREATE TABLE approval_steps (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        approval_request_id VARCHAR(40) NOT NULL,
        public_approval_id VARCHAR(40) NOT NULL,
        position INTEGER NOT NULL,
        step_key VARCHAR(64) NOT NULL,
        side VARCHAR(32) NOT NULL,
        subject_type VARCHAR(32) NOT NULL,
        subject_id VARCHAR(128) NOT NULL,
        relation_type VARCHAR(80) NOT NULL,
        relation_source VARCHAR(32) NOT NULL,
        status VARCHAR(16) NOT NULL,
        method VARCHAR(32) NOT NULL,
        transport_channel VARCHAR(32) NOT NULL,
        reason_code VARCHAR(64) NOT NULL,
        reason_note ${text} NOT NULL,
        notification_count INTEGER NOT NULL,
        requested_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        decided_at BIGINT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        CONSTRAINT uq_approval_steps_key UNIQUE (tenant_id, approval_request_id, step_key)
      )${tableSuffix(qr)}`,
      'CREATE INDEX ix_approval_steps_due ON approval_steps (status, expires_at)',
      `CREATE TABLE approval_grants (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        public_grant_id VARCHAR(40) NOT NULL,
        approval_request_id VARCHAR(40) NOT NULL,
        status VARCHAR(16) NOT NULL,
        target_audience VARCHAR(512) NOT NULL,
        resource_class VARCHAR(128) NOT NULL,
        redaction_level VARCHAR(32) NOT NULL,
        scope_canonical ${text} NOT NULL,
        scope_json ${text} NOT NULL,
        requester_subject_type VARCHAR(32) NOT NULL,
        requester_subject_id VARCHAR(128) NOT NULL,
        actor_subject_type VARCHAR(32) NOT NULL,
        actor_subject_id VARCHAR(128) NOT NULL,
        issued_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        CONSTRAINT uq_approval_grants_request UNIQUE (tenant_id, approval_request_id)
      )${tableSuffix(qr)}`,
      `CREATE TABLE approval_notifications (
        id VARCHAR(40) NOT NULL PRIMARY KEY,
        tenant_id VARCHAR(40) NOT NULL,
        approval_request_id VARCHAR(40) NOT NULL,
        approval_step_id VARCHAR(40) NOT NULL,
        step_key VARCHAR(64) NOT NULL,
        action VARCHAR(32) NOT NULL,
        method VARCHAR(32) NOT NULL,
        success INTEGER NOT NULL,
        retryable INTEGER NOT NULL,
        completion_artifact ${text} NULL,
        created_at BIGINT NOT NULL
      )${tableSuffix(qr)}`,
      'CREATE INDEX ix_approval_notifications_request ON approval_notifications (tenant_id, approval_request_id)',
    ]);
  }

  async down(qr: QueryRunner): Promise<void> {
    // DROP TABLE takes the table's indexes with it; dropping one first fails on MySQL when a
    // foreign key needs it (ER_DROP_INDEX_FK).
    await runAll(qr, [
      'DROP TABLE approval_notifications',
      'DROP TABLE approval_grants',
      'DROP TABLE approval_steps',
      'DROP TABLE approval_requests',
      'DROP TABLE user_relationships',
    ]);
  }
}
