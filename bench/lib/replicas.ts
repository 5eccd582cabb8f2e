import { postgresServerBinaries, startReplicatedServers, waitForReplay } from '../../harness/replication.js';
import { undoLater } from './cleanup.js';
import { log, settings, warnings } from './config.js';
import { loadData } from './data.js';
import { cell, drive } from './matrix.js';
import { operations, type Variant } from './operations.js';
import { BackendCpu } from './processes.js';
import type { ReplicaRoutingResult } from './report.js';
import { startGateway } from './servers.js';

/**
 * What routing reads to a replica costs: the same gateway build on a primary
 * of its own, once alone and once with a streaming replica of it
 * (DATABASE_REPLICA_URLS), both on this machine, so the figure is the
 * routing's overhead, not a replica's gain (the two servers share the CPUs).
 * A pet by id, the pets page, and placeOrder (which then also reads the
 * primary's write position); every cell at c=10, alternating.
 */
const measuredKeys = ['gateway:pet', 'gateway:pets', 'gateway:place-order'];


export async function replicaRoutingPass(): Promise<ReplicaRoutingResult | undefined> {
  if (!postgresServerBinaries()) {
    warnings.push('Replica routing pass skipped: no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql).');
    return undefined;
  }
  const variants = measuredKeys
    .map((key) => operations.find((operation) => operation.gateway.key === key)?.gateway)
    .filter((variant): variant is Variant => variant !== undefined);
  log('replica routing pass: a primary and a streaming replica of their own (initdb, pg_basebackup), loading the data set');
  let stopServers: () => Promise<void> = async () => undefined;
  const servers = await startReplicatedServers({
    // pg_ctl starts each server in a session of its own, out of reach of a terminal's Ctrl-C: only this stops them.
    onCreated: (dir, stop) => {
      stopServers = undoLater(`stop the PostgreSQL servers in ${dir}`, stop);
      log(`replica servers' folder: ${dir}`);
    },
  });
  try {
    await loadData(servers.primaryUrl);
    await waitForReplay(servers.onPrimary, servers.onReplica, 120_000);
    const primaryOnly = await startGateway(servers.primaryUrl, 'gateway-primary-only');
    const withReplica = await startGateway(servers.primaryUrl, 'gateway-with-replica', [], { DATABASE_REPLICA_URLS: servers.replicaUrl });
    try {
      // Both servers' backends are named after the database, so their CPU is summed.
      const backend = new BackendCpu('petstore');
      const pairs: ReplicaRoutingResult['pairs'] = [];
      for (const variant of variants) {
        for (const server of [primaryOnly, withReplica]) await drive(server, variant, 10, Math.max(1, settings.warmupS / 4));
        const readsBefore = await readsByServer(withReplica.url);
        // Shorter cells than the main pass's: the whole bench stays under 10 minutes.
        const alone = await cell(primaryOnly, variant, 10, backend, settings.durationS * 0.75);
        const routed = await cell(withReplica, variant, 10, backend, settings.durationS * 0.75);
        const readsAfter = await readsByServer(withReplica.url);
        const replicaReads = readsAfter.replica - readsBefore.replica;
        const allReads = replicaReads + readsAfter.primary - readsBefore.primary;
        pairs.push({
          variant: variant.key,
          label: variant.label,
          primaryOnly: alone,
          withReplica: routed,
          replicaReadShare: allReads > 0 ? replicaReads / allReads : null,
        });
        log(
          `${variant.key.padEnd(22)} primary alone ${alone.requestsPerSecond.toFixed(0)} req/s, cpu ${alone.serverCpuMsPerRequest?.toFixed(2)} ms/req; ` +
            `with a replica ${routed.requestsPerSecond.toFixed(0)} req/s, cpu ${routed.serverCpuMsPerRequest?.toFixed(2)} ms/req`,
        );
      }
      return { pairs };
    } finally {
      await primaryOnly.stop();
      await withReplica.stop();
    }
  } finally {
    await stopServers();
  }
}

/** petstore_db_reads_total by server, from the gateway's /metrics. */
async function readsByServer(url: string) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const count = (server: string) => Number(new RegExp(`^petstore_db_reads_total\\{server="${server}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
  return { primary: count('primary'), replica: count('replica') };
}
