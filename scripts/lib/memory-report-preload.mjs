// Preloaded into a child Node process (`node --import <this file> ...`) by bench-idle.ts,
// which reads the memory of a `k8ts server` it starts: on SIGUSR2 it writes
// process.memoryUsage() (bytes: rss, heapTotal, heapUsed, external, arrayBuffers) and
// v8.getHeapSpaceStatistics() as JSON to $K8TS_MEMORY_REPORT, then, if
// $K8TS_HEAP_SNAPSHOT is set, a heap snapshot to that path (v8.writeHeapSnapshot). The
// report is written before the snapshot, whose own allocations are large. Costs nothing
// until the signal: one listener, no timer, no module hooks.
import { renameSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import v8 from 'node:v8';

const out = process.env.K8TS_MEMORY_REPORT;
if (out) {
  process.on('SIGUSR2', () => {
    const report = { memoryUsage: process.memoryUsage(), heapSpaces: v8.getHeapSpaceStatistics() };
    // Written whole, then renamed: the reader polls for the file.
    writeFileSync(`${out}.tmp`, JSON.stringify(report));
    renameSync(`${out}.tmp`, out);
    const snapshot = process.env.K8TS_HEAP_SNAPSHOT;
    if (snapshot) {
      v8.writeHeapSnapshot(`${snapshot}.tmp`);
      renameSync(`${snapshot}.tmp`, snapshot);
    }
  });
}
