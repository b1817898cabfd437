/**
 * `npm run bench:api`: the API server under load, as a separate real process
 * (`k8ts server --disable-agent`, sqlite store, fresh data dir), measured from this one.
 *
 *  1. Idle RSS of the server process after start-up.
 *  2. Mutating calls, closed loop: 50 concurrent clients creating ConfigMaps back to back
 *     for BENCH_SECONDS (default 5) → throughput, p50/p99.
 *  3. Mutating calls, open loop at BENCH_RATE writes/s (default 500) for BENCH_SECONDS →
 *     p50/p99 at that rate (Kubernetes' SLO: p99 ≤ 1 s; our target: < 50 ms).
 *  4. Watch delivery: BENCH_WATCHERS (default 1000) concurrent watches of ConfigMaps in
 *     one namespace; 200 creates at 50/s; latency from the create request to each
 *     watcher's receipt of its ADDED event, p50/p99 over all watcher × event pairs.
 *  5. RSS after the load.
 *
 * Before the server starts, in this process: the request path's own costs — building the
 * OpenAPI documents (cold, then from the cache), and field validation per Deployment
 * (checkFieldTypes, pruneUnknownFields, duplicateFields) in µs per call, for
 * examples/spring-deployment.yaml and for it as the store holds it after a few writes;
 * target < 500 µs per call for the latter (the order of magnitude is the point: a few µs
 * on a quiet machine).
 *
 * Prints Markdown tables. Not a test.
 */
import type http from 'node:http';
import https from 'node:https';
import { loadKubeconfig } from '../api/client/kubeconfig.js';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import {
  checkFieldTypes,
  duplicateFields,
  loadFieldSchemas,
  pruneUnknownFields,
} from '../control/apiserver/fieldvalidation/index.js';
import { typicalDeployment } from '../control/apiserver/fieldvalidation/testing.js';
import { openAPIV2, warmOpenAPI } from '../control/apiserver/openapi/index.js';
import { startK8tsServer } from '../test/support/k8ts-server.js';
import { percentile, table } from './lib/stats.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const RATE = Number(process.env.BENCH_RATE ?? 500);
const WATCHERS = Number(process.env.BENCH_WATCHERS ?? 1000);
const CLIENTS = 50;

/** Keep-alive HTTPS with the admin kubeconfig's CA and client certificate (set in main). */
let agent = new https.Agent({ keepAlive: true, maxSockets: Infinity });

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** POSTs a JSON body; resolves with the status code. */
function post(base: URL, path: string, body: unknown): Promise<number> {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: base.hostname,
        port: base.port,
        path,
        method: 'POST',
        agent,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const configMap = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels: { bench: 'api' } },
  data: { key: 'x'.repeat(512) },
});

async function closedLoop(
  base: URL,
): Promise<{ ops: number; seconds: number; lat: number[]; errors: number }> {
  const lat: number[] = [];
  let errors = 0;
  const deadline = Date.now() + SECONDS * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      for (let i = 0; Date.now() < deadline; i++) {
        const t = performance.now();
        const code = await post(base, '/api/v1/namespaces/default/configmaps', configMap(`closed-${c}-${i}`));
        lat.push(performance.now() - t);
        if (code !== 201) errors++;
      }
    }),
  );
  return { ops: lat.length, seconds: (performance.now() - start) / 1000, lat, errors };
}

async function openLoop(base: URL): Promise<{ lat: number[]; errors: number; achieved: number }> {
  const lat: number[] = [];
  let errors = 0;
  const total = RATE * SECONDS;
  const start = performance.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inflight.push(
      post(base, '/api/v1/namespaces/default/configmaps', configMap(`open-${i}`)).then((code) => {
        lat.push(performance.now() - due);
        if (code !== 201) errors++;
      }),
    );
  }
  await Promise.all(inflight);
  return { lat, errors, achieved: total / ((performance.now() - start) / 1000) };
}

async function watchDelivery(base: URL): Promise<{ lat: number[]; missing: number }> {
  const ns = 'kube-public';
  const sentAt = new Map<string, number>();
  const lat: number[] = [];
  let received = 0;
  const events = 200;
  const expected = WATCHERS * events;
  let allDone: () => void = () => {};
  const done = new Promise<void>((r) => (allDone = r));
  const requests: http.ClientRequest[] = [];
  let ready = 0;
  let allReady: () => void = () => {};
  const readyP = new Promise<void>((r) => (allReady = r));
  for (let w = 0; w < WATCHERS; w++) {
    const req = https.get(
      {
        host: base.hostname,
        port: base.port,
        path: `/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=0`,
        agent,
      },
      (res) => {
        if (++ready === WATCHERS) allReady();
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const now = performance.now();
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            const name = /"name":"(wbench-\d+)"/.exec(line)?.[1];
            const t = name ? sentAt.get(name) : undefined;
            if (t !== undefined) {
              lat.push(now - t);
              if (++received === expected) allDone();
            }
          }
        });
      },
    );
    req.on('error', () => {});
    requests.push(req);
  }
  await readyP;
  for (let i = 0; i < events; i++) {
    const name = `wbench-${i}`;
    sentAt.set(name, performance.now());
    await post(base, `/api/v1/namespaces/${ns}/configmaps`, configMap(name));
    await new Promise((r) => setTimeout(r, 20));
  }
  await Promise.race([done, new Promise((r) => setTimeout(r, 30_000))]);
  for (const r of requests) r.destroy();
  return { lat, missing: expected - received };
}

/** Mean µs per call of `fn`, after a warm-up of a quarter as many calls. */
function perCallUs(fn: () => unknown, n = 20_000): number {
  for (let i = 0; i < n / 4; i++) fn();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) fn();
  return ((performance.now() - t0) * 1000) / n;
}

/** Rows (case, µs or ms, target) of the request path's in-process costs. */
async function requestPathCosts(): Promise<string[][]> {
  const ms = async (fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    await fn();
    return performance.now() - t0;
  };
  const coldMs = await ms(() => warmOpenAPI());
  const cachedMs = await ms(() => warmOpenAPI());
  const v2Bytes = (await openAPIV2()).body.length;
  const schemasMs = await ms(() => loadFieldSchemas());

  const yaml = readFileSync(new URL('../examples/spring-deployment.yaml', import.meta.url), 'utf8');
  const spring = parseYaml(yaml) as Record<string, unknown>;
  const typical = typicalDeployment(spring);
  const body = JSON.stringify(typical);
  const parsed: unknown = JSON.parse(body);
  const withDup = body.replace('{"name":"spring-deployment"', '{"name":"x","name":"spring-deployment"');
  const withDupParsed: unknown = JSON.parse(withDup);
  const us = (x: number) => `${x.toFixed(2)} µs`;
  const target = (x: number) => (x < 500 ? '< 500 µs: ok' : '< 500 µs: OVER');
  const typicalTypes = perCallUs(() => checkFieldTypes('V1Deployment', typical, 'Deployment', 'v1'));
  const typicalPrune = perCallUs(() => pruneUnknownFields('V1Deployment', typical));
  return [
    ['case', 'cost', 'target'],
    [
      'OpenAPI v2 + v3 documents, cold build',
      `${coldMs.toFixed(0)} ms (v2 ${(v2Bytes / 1024).toFixed(0)} KiB)`,
      '',
    ],
    ['OpenAPI documents again (cached)', `${cachedMs.toFixed(2)} ms`, ''],
    ['loadFieldSchemas (after OpenAPI)', `${schemasMs.toFixed(0)} ms`, ''],
    [
      'checkFieldTypes, spring-deployment.yaml',
      us(perCallUs(() => checkFieldTypes('V1Deployment', spring, 'Deployment', 'v1'))),
      '',
    ],
    ['checkFieldTypes, stored Deployment', us(typicalTypes), target(typicalTypes)],
    [
      'pruneUnknownFields, spring-deployment.yaml',
      us(perCallUs(() => pruneUnknownFields('V1Deployment', spring))),
      '',
    ],
    ['pruneUnknownFields, stored Deployment', us(typicalPrune), target(typicalPrune)],
    [
      `duplicateFields, ${body.length} B of JSON, none`,
      us(perCallUs(() => duplicateFields(body, { model: 'V1Deployment', parsed }))),
      '',
    ],
    [
      `duplicateFields, ${withDup.length} B of JSON, one`,
      us(perCallUs(() => duplicateFields(withDup, { model: 'V1Deployment', parsed: withDupParsed }))),
      '',
    ],
    [`JSON.parse of the same ${body.length} B (for scale)`, us(perCallUs(() => JSON.parse(body))), ''],
  ];
}

async function main(): Promise<void> {
  const costs = await requestPathCosts();
  console.log(`Request path, in process (node ${process.version})\n`);
  console.log(table(costs));
  console.log();
  const server = await startK8tsServer({ args: ['--log-level', 'warn'] });
  try {
    const base = new URL(server.url);
    const { ca, cert, key } = loadKubeconfig(server.kubeconfig).config;
    agent = new https.Agent({
      keepAlive: true,
      maxSockets: Infinity,
      ...(ca ? { ca } : {}),
      ...(cert ? { cert } : {}),
      ...(key ? { key } : {}),
    });
    // Let start-up allocations settle before reading idle RSS.
    await new Promise((r) => setTimeout(r, 2000));
    const idle = rssMiB(server.pid);
    const closed = await closedLoop(base);
    const open = await openLoop(base);
    const watch = await watchDelivery(base);
    const loaded = rssMiB(server.pid);
    const f = (x: number) => x.toFixed(2);
    console.log(`API server benchmark: ${SECONDS} s per load case, sqlite store, node ${process.version}\n`);
    console.log(
      table([
        ['case', 'result', 'p50 ms', 'p99 ms', 'errors'],
        [
          `create ConfigMap, ${CLIENTS} clients closed loop`,
          `${(closed.ops / closed.seconds).toFixed(0)} writes/s`,
          f(percentile(closed.lat, 50)),
          f(percentile(closed.lat, 99)),
          String(closed.errors),
        ],
        [
          `create ConfigMap, open loop at ${RATE}/s`,
          `${open.achieved.toFixed(0)} writes/s`,
          f(percentile(open.lat, 50)),
          f(percentile(open.lat, 99)),
          String(open.errors),
        ],
        [
          `watch delivery, ${WATCHERS} watchers × 200 events`,
          `${watch.lat.length} deliveries`,
          f(percentile(watch.lat, 50)),
          f(percentile(watch.lat, 99)),
          `${watch.missing} missing`,
        ],
        ['server RSS idle / after load', `${idle.toFixed(0)} MiB / ${loaded.toFixed(0)} MiB`, '', '', ''],
      ]),
    );
  } finally {
    agent.destroy();
    await server.stop();
  }
}

await main();
