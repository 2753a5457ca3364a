/**
 * Writes `oclif.manifest.json` at the package root, the build's last step (`npm run build`,
 * `prepare`). Without a manifest oclif imports every command module on each start just to list
 * them, which cost about a second of CPU per `iam` call (even `iam --version`); with one it
 * imports only the command that runs. This is what the `oclif manifest` tool does, in a few
 * lines, so the build needs no extra package.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Plugin } from '@oclif/core';

const root = fileURLToPath(new URL('../..', import.meta.url));
// ignoreManifest: build from the compiled commands, not a previous manifest; errorOnManifestCreate:
// a command that fails to load fails the build instead of vanishing from `iam --help`.
const plugin = new Plugin({ root, type: 'core', ignoreManifest: true, errorOnManifestCreate: true });
await plugin.load();
const file = `${root}oclif.manifest.json`;
writeFileSync(`${file}.tmp`, `${JSON.stringify(plugin.manifest, null, 2)}\n`);
renameSync(`${file}.tmp`, file);
