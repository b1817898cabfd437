// One HollowNode against the in-process API server, on a fake clock: how often it reads and
// writes its Node while idle (the kubelet's nodeStatusReportFrequency; its status computed
// against the shared watch's Node, as the kubelet reads its nodeLister, not a GET).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FakeClock } from '../../api/clock.js';
import { resources } from '../../api/client/resource.js';
import { waitFor } from '../../api/client/testing.js';
import type { Node } from '../../api/types.js';
import { startTestApi, type TestApi } from '../../test/support/api.js';
import { captureLogger } from '../testing.js';
import { HOLLOW_NODE_STATUS_REPORT_FREQUENCY_MS, HollowNode } from './node.js';
import { HollowWatches } from './watches.js';

/** Milliseconds between status cycles here: no other loop of a node sleeps this long. */
const STATUS_MS = 7_000;

describe('HollowNode', () => {
  let api: TestApi;
  let dir: string;
  before(async () => {
    api = await startTestApi();
    dir = mkdtempSync(join(tmpdir(), 'k8ts-hollow-node-test-'));
  });
  after(async () => {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The server's count of `verb` requests on `resource` (apiserver_request_total, every code). */
  async function requests(verb: string, resource: string): Promise<number> {
    const text = await (await fetch(`${api.url}/metrics`)).text();
    let n = 0;
    for (const m of text.matchAll(/^apiserver_request_total\{([^}]*)\} (\S+)$/gm)) {
      if (m[1]!.includes(`verb="${verb}"`) && m[1]!.includes(`resource="${resource}"`)) n += Number(m[2]);
    }
    return n;
  }

  it('posts an unchanged status every 5 minutes, computed without a GET of its Node', async () => {
    const nodeName = 'hollow-test-0';
    const clock = new FakeClock();
    const { logger } = captureLogger();
    const watches = new HollowWatches({ client: api.client, nodeNames: new Set([nodeName]), logger });
    assert.ok(await watches.start(10_000));
    after(() => watches.stop());
    const node = await HollowNode.start({
      server: api.url,
      nodeName,
      nodeIP: '127.0.0.1',
      // Plain HTTP: no TLS material is used.
      credential: { ca: '', cert: '', key: '' },
      capacity: { cpu: 4, memoryBytes: 16 * 2 ** 30, pods: 110 },
      dataDir: join(dir, nodeName),
      watches,
      jobPodRunTimeMs: 1000,
      logger,
      clock,
      random: () => 0,
      nodeStatusUpdateFrequencyMs: STATUS_MS,
    });
    after(() => node.stop());
    const getNode = () => api.client.get<Node>(resources.nodes, undefined, nodeName);
    const ready = (n: Node) => n.status!.conditions!.find((c) => c.type === 'Ready')!;
    // The shared watch has delivered the registered Node.
    await waitFor('the Node in the shared watch', () => watches.nodes.lister().get(nodeName) !== undefined);

    const cycles = () => clock.sleeps.filter((ms) => ms === STATUS_MS).length;
    const step = async () => {
      const n = cycles();
      await clock.advance(STATUS_MS);
      await waitFor('a status cycle', () => cycles() > n);
    };
    await step();
    const settled = await getNode();
    const gets = await requests('get', 'nodes');
    const patches = await requests('patch', 'nodes/status');
    // Up to just before the report period (the first cycle ran at 0 s).
    while (clock.now() + STATUS_MS - Date.UTC(2026, 0, 1) < HOLLOW_NODE_STATUS_REPORT_FREQUENCY_MS)
      await step();
    assert.ok(cycles() >= 40);
    assert.equal(await requests('get', 'nodes'), gets, 'no GET of the Node in its status cycles');
    assert.equal(await requests('patch', 'nodes/status'), patches, 'no status PATCH before 5 minutes');
    assert.equal((await getNode()).metadata.resourceVersion, settled.metadata.resourceVersion);

    await step();
    await waitFor(
      'the 5-minute status report',
      async () => (await requests('patch', 'nodes/status')) > patches,
    );
    const reported = await getNode();
    assert.equal(ready(reported).lastHeartbeatTime, new Date(clock.now()).toISOString().replace('.000', ''));
    assert.equal(ready(reported).lastTransitionTime, ready(settled).lastTransitionTime);
  });
});
