/**
 * Daemons on different nodes of the lane's 3-node Galera cluster are one service: what one
 * writes, another reads, and each talks to its own node.
 */
import test from 'ava';
import { startDaemon, type Daemon } from '../helpers/daemon.js';
import { galeraDatabase, seedApiAndWorker, connectionsPerNode, galeraUrls } from '../helpers/galera.js';
import { clientCredentialsToken, introspectAs } from '../helpers/seed.js';

test('three daemons, one per node, share one service', async (t) => {
  t.is(galeraUrls().length, 3, 'the lane runs three nodes');
  const db = await galeraDatabase(t);
  const { api, worker } = await seedApiAndWorker(db, 'Cluster');

  // One service: one issuer, whichever daemon answers.
  const daemons: Daemon[] = [];
  t.teardown(() => Promise.all(daemons.map((d) => d.stop())));
  // The first daemon's issuer, with the port it was given, is the others' too.
  for (const url of db.urls)
    daemons.push(await startDaemon(url, db.dir, daemons[0] ? { IAM_ISSUER: daemons[0].url } : {}));

  // Each daemon holds connections to its own node (and only there).
  const conns = await connectionsPerNode(db.urls, db.name);
  t.true(
    conns.every((n) => n > 0),
    `every node has connections from its daemon: ${conns.join(', ')}`,
  );

  // A token issued through one node is active when introspected through each of the others.
  for (const [i, issuing] of daemons.entries()) {
    const token = await clientCredentialsToken(issuing.url, worker.clientId, worker.secret, 'api');
    for (const [j, reading] of daemons.entries()) {
      const r = await introspectAs(reading.url, api, token);
      t.is(r.status, 200);
      t.is(r.body.active, true, `token from daemon ${i + 1} active at daemon ${j + 1}`);
    }
  }
});
