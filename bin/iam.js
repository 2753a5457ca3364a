#!/usr/bin/env node
// Entry point of the `iam` operator CLI. The commands are compiled TypeScript in
// dist/cli/commands (see "oclif" in package.json); `npm install` builds them via `prepare`.
import { execute } from '@oclif/core';

await execute({ dir: import.meta.url });
