/**
 * Every migration, in the order it applies. Both dialects run the same list; a migration that
 * differs between them asks `isMysql()` (see dialect.ts). Append new ones at the end.
 */
import { Core1763769600001 } from './0001-core.js';

export const migrations = [Core1763769600001];
