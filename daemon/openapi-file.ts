/**
 * /openapi.json without a server: `node dist/daemon/openapi-file.js <file>` writes the document
 * the daemon serves (`npm run lint:openapi` lints it; docs/openapi.md). The application is built
 * as main.ts builds it, on the configuration of the environment, over a data source that is
 * never connected: building the routes does no I/O (docs/architecture.md, "The container"),
 * and the document is made of the route declarations alone.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../shared/config.js';
import { createDataSource } from '../shared/db/data-source.js';
import { buildServices } from '../shared/container.js';
import { buildApp, VERSION } from './app.js';
import { createLogger } from './log.js';

export function openApiDocumentOf(env: NodeJS.ProcessEnv = process.env): Record<string, unknown> {
  // A throwaway data directory: the database file is never opened, and the secret key (which
  // the document does not show) is not generated into the real one.
  const dir = mkdtempSync(join(tmpdir(), 'iam-openapi-'));
  try {
    const config = loadConfig({
      ...env,
      IAM_DATA_DIR: dir,
      IAM_DATABASE_URL: `sqlite:${join(dir, 'unused.db')}`,
      IAM_SECRET_KEY: 'openapi-document-only-0123456789abcdef',
    });
    const services = buildServices(createDataSource(config.database), config, createLogger('silent'));
    return buildApp(services).api.document(config.issuer, VERSION);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = process.argv[2];
  if (!out) {
    process.stderr.write('usage: node dist/daemon/openapi-file.js <file>\n');
    process.exit(2);
  }
  writeFileSync(out, `${JSON.stringify(openApiDocumentOf(), null, 2)}\n`);
  process.stdout.write(`wrote ${out}\n`);
}
