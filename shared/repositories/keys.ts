/** Token signing keys: platform-level, one key set for every tenant (one issuer). */
import { SigningKeyEntity, type SigningKey } from '../db/entities.js';
import type { Db } from '../db/index.js';
import { manager } from './common.js';

export class SigningKeyRepository {
  constructor(private readonly db: Db) {}
  private get repo() {
    return manager(this.db).getRepository(SigningKeyEntity);
  }
  list(): Promise<SigningKey[]> {
    return this.repo.find({ order: { created_at: 'DESC', kid: 'ASC' } });
  }
  get(kid: string): Promise<SigningKey | null> {
    return this.repo.findOneBy({ kid });
  }
  async insert(k: SigningKey): Promise<void> {
    await this.repo.insert(k);
  }
  async update(kid: string, patch: Partial<SigningKey>): Promise<void> {
    await this.repo.update({ kid }, patch);
  }
}
