/**
 * The bench's metadata server in a process of its own, so that the load generator running in
 * the bench process does not slow the download it serves: serves the file named by argv[2] at
 * /aggregate.xml over HTTPS on loopback (ETag, Last-Modified, 304), prints
 * `{"base": …, "certFile": …}` on stdout, and runs until killed.
 */
import { readFileSync } from 'node:fs';
import { startMetadataServer } from '../../test/helpers/federation-metadata.js';

const server = await startMetadataServer();
server.set('/aggregate.xml', readFileSync(process.argv[2]));
process.stdout.write(JSON.stringify({ base: server.base, certFile: server.cert.certFile }) + '\n');
const stop = () => void server.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
