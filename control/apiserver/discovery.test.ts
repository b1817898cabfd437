import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  CONTENT_TYPE_AGGREGATED_V2,
  CONTENT_TYPE_AGGREGATED_V2BETA1,
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  discoveryResponse,
  negotiateDiscovery,
  storageVersionHash,
  versionInfo,
} from './discovery.js';
import type { APIGroupDiscoveryList, APIResource, DiscoveryFormat } from './discovery.js';
import { CONTENT_TYPE_JSON } from './document-response.js';
import { METRICS_RESOURCES } from './resource-metrics.js';
import { RESOURCES as STORED, groupVersion } from './resources.js';

/** Everything discovery lists: the stored resources and metrics.k8s.io (served, not stored). */
const RESOURCES = [...STORED, ...METRICS_RESOURCES];
import { kubectlFor, startDocsServer } from '../../test/support/docs-server.js';
import type { DocsServer, Kubectl } from '../../test/support/docs-server.js';

/** What kubectl v1.32 (client-go discovery) sends to /api and /apis. */
const KUBECTL_DISCOVERY_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,' +
  'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

describe('/version', () => {
  it('claims Kubernetes 1.32 with a semver gitVersion and Go-style platform', () => {
    const v = versionInfo({ gitCommit: 'abc123', buildDate: '2026-01-02T03:04:05Z' });
    assert.equal(v.major, '1');
    assert.equal(v.minor, '32');
    assert.match(v.gitVersion, /^v1\.32\.0\+k8ts$/);
    assert.match(v.platform, /^[a-z0-9]+\/[a-z0-9]+$/);
    assert.equal(v.gitCommit, 'abc123');
    assert.equal(v.gitTreeState, 'clean');
    assert.equal(v.buildDate, '2026-01-02T03:04:05Z');
    if (process.arch === 'x64') assert.match(v.platform, /\/amd64$/);
  });
});

describe('per-group discovery', () => {
  it('/api lists v1 and the server address', () => {
    assert.deepEqual(apiVersions({ serverAddress: '10.0.0.1:6443' }), {
      kind: 'APIVersions',
      apiVersion: 'v1',
      versions: ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '10.0.0.1:6443' }],
    });
    assert.deepEqual(apiVersions().serverAddressByClientCIDRs, []);
  });

  it('/apis lists every served group but core, with its preferred version', () => {
    const list = apiGroupList();
    assert.equal(list.kind, 'APIGroupList');
    assert.deepEqual(
      list.groups.map((g) => g.name),
      [
        'apps',
        'autoscaling',
        'batch',
        'coordination.k8s.io',
        'discovery.k8s.io',
        'events.k8s.io',
        'rbac.authorization.k8s.io',
        'policy',
        'storage.k8s.io',
        'authorization.k8s.io',
        'authentication.k8s.io',
        'apiextensions.k8s.io',
        'metrics.k8s.io',
      ],
    );
    for (const g of list.groups) {
      const v = g.name === 'metrics.k8s.io' ? 'v1beta1' : g.name === 'autoscaling' ? 'v2' : 'v1';
      assert.deepEqual(g.preferredVersion, { groupVersion: `${g.name}/${v}`, version: v });
      // autoscaling also serves v1 (converted), after the preferred v2.
      assert.deepEqual(
        g.versions,
        g.name === 'autoscaling'
          ? [g.preferredVersion, { groupVersion: 'autoscaling/v1', version: 'v1' }]
          : [g.preferredVersion],
      );
    }
  });

  it('/apis/<group> answers served groups only', () => {
    assert.deepEqual(apiGroup('apps'), {
      kind: 'APIGroup',
      apiVersion: 'v1',
      name: 'apps',
      versions: [{ groupVersion: 'apps/v1', version: 'v1' }],
      preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
    });
    assert.equal(apiGroup(''), undefined);
    assert.equal(apiGroup('networking.k8s.io'), undefined);
    assert.equal(apiResourceList('apps', 'v1beta1'), undefined);
    assert.equal(apiResourceList('', 'v2'), undefined);
  });

  // [group, version, name, expected entry] — the entries kube-apiserver 1.32 serves.
  const cases: [string, string, string, APIResource][] = [
    [
      '',
      'v1',
      'pods',
      {
        name: 'pods',
        singularName: 'pod',
        namespaced: true,
        kind: 'Pod',
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        shortNames: ['po'],
        categories: ['all'],
        storageVersionHash: 'xPOwRZ+Yhw8=',
      },
    ],
    ['', 'v1', 'pods/status', s('pods/status', true, 'Pod', ['get', 'patch', 'update'])],
    ['', 'v1', 'pods/binding', s('pods/binding', true, 'Binding', ['create'])],
    [
      '',
      'v1',
      'pods/eviction',
      { ...s('pods/eviction', true, 'Eviction', ['create']), group: 'policy', version: 'v1' },
    ],
    ['', 'v1', 'pods/log', s('pods/log', true, 'Pod', ['get'])],
    ['', 'v1', 'pods/exec', s('pods/exec', true, 'PodExecOptions', ['create', 'get'])],
    ['', 'v1', 'pods/attach', s('pods/attach', true, 'PodAttachOptions', ['create', 'get'])],
    ['', 'v1', 'pods/portforward', s('pods/portforward', true, 'PodPortForwardOptions', ['create', 'get'])],
    [
      '',
      'v1',
      'namespaces',
      {
        name: 'namespaces',
        singularName: 'namespace',
        namespaced: false,
        kind: 'Namespace',
        verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
        shortNames: ['ns'],
        storageVersionHash: 'Q3oi5N2YM8M=',
      },
    ],
    ['', 'v1', 'nodes/status', s('nodes/status', false, 'Node', ['get', 'patch', 'update'])],
    [
      'apps',
      'v1',
      'deployments',
      {
        name: 'deployments',
        singularName: 'deployment',
        namespaced: true,
        kind: 'Deployment',
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        shortNames: ['deploy'],
        categories: ['all'],
        storageVersionHash: '8aSe+NMegvE=',
      },
    ],
    [
      'apps',
      'v1',
      'deployments/scale',
      {
        ...s('deployments/scale', true, 'Scale', ['get', 'patch', 'update']),
        group: 'autoscaling',
        version: 'v1',
      },
    ],
    [
      'apps',
      'v1',
      'replicasets/status',
      s('replicasets/status', true, 'ReplicaSet', ['get', 'patch', 'update']),
    ],
  ];
  function s(name: string, namespaced: boolean, kind: string, verbs: string[]): APIResource {
    return { name, singularName: '', namespaced, kind, verbs };
  }

  for (const [group, version, name, expected] of cases) {
    it(`${groupVersion({ group, version })} ${name}`, () => {
      const list = apiResourceList(group, version);
      assert.ok(list);
      assert.deepEqual(
        list.resources.find((r) => r.name === name),
        expected,
      );
    });
  }

  it('lists resources by name, each followed by its subresources, and covers the resource table', () => {
    for (const r of RESOURCES) {
      const list = apiResourceList(r.group, r.version)!;
      assert.equal(list.groupVersion, groupVersion(r));
      const names = list.resources.map((e) => e.name);
      assert.deepEqual(names, [...names].sort());
      assert.ok(names.includes(r.resource));
      for (const sub of r.subresources) assert.ok(names.includes(`${r.resource}/${sub}`));
    }
  });

  it('lists each resource before any subresource of the same kind (client-node takes the first match)', () => {
    // @kubernetes/client-node's KubernetesObjectApi resolves a kind to a resource with
    // resources.find((r) => r.kind === kind).
    for (const r of RESOURCES) {
      const first = apiResourceList(r.group, r.version)!.resources.find((e) => e.kind === r.kind);
      assert.equal(first?.name, r.resource);
    }
  });

  it('computes storage version hashes as the apiserver does', () => {
    assert.equal(storageVersionHash('', 'v1', 'ConfigMap'), 'qFsyl6wFWjQ=');
  });
});

describe('aggregated discovery', () => {
  it('/api is one unnamed group with core v1, fresh', () => {
    const doc = aggregatedDiscovery('api');
    assert.equal(doc.kind, 'APIGroupDiscoveryList');
    assert.equal(doc.apiVersion, 'apidiscovery.k8s.io/v2');
    assert.equal(doc.items.length, 1);
    assert.equal(doc.items[0]!.metadata.name, undefined);
    assert.deepEqual(
      doc.items[0]!.versions.map((v) => [v.version, v.freshness]),
      [['v1', 'Current']],
    );
    const pods = doc.items[0]!.versions[0]!.resources.find((r) => r.resource === 'pods')!;
    assert.deepEqual(pods.responseKind, { group: '', version: '', kind: 'Pod' });
    assert.equal(pods.scope, 'Namespaced');
    assert.equal(pods.singularResource, 'pod');
    assert.deepEqual(
      pods.subresources?.find((x) => x.subresource === 'eviction'),
      {
        subresource: 'eviction',
        responseKind: { group: 'policy', version: 'v1', kind: 'Eviction' },
        verbs: ['create'],
      },
    );
    const nodes = doc.items[0]!.versions[0]!.resources.find((r) => r.resource === 'nodes')!;
    assert.equal(nodes.scope, 'Cluster');
  });

  it('/apis names each group; v2beta1 differs only in apiVersion', () => {
    const v2 = aggregatedDiscovery('apis');
    assert.deepEqual(
      v2.items.map((g) => g.metadata.name),
      [
        'apps',
        'autoscaling',
        'batch',
        'coordination.k8s.io',
        'discovery.k8s.io',
        'events.k8s.io',
        'rbac.authorization.k8s.io',
        'policy',
        'storage.k8s.io',
        'authorization.k8s.io',
        'authentication.k8s.io',
        'apiextensions.k8s.io',
        'metrics.k8s.io',
      ],
    );
    const beta = aggregatedDiscovery('apis', 'v2beta1');
    assert.equal(beta.apiVersion, 'apidiscovery.k8s.io/v2beta1');
    assert.deepEqual(beta.items, v2.items);
  });

  /** client-go's SplitGroupsAndResources: aggregated → per-group APIResourceLists. */
  function split(doc: APIGroupDiscoveryList): Map<string, APIResource[]> {
    const out = new Map<string, APIResource[]>();
    for (const g of doc.items) {
      for (const v of g.versions) {
        const list: APIResource[] = [];
        for (const r of v.resources) {
          const parent: APIResource = {
            name: r.resource,
            singularName: r.singularResource,
            namespaced: r.scope === 'Namespaced',
            kind: r.responseKind.kind,
            verbs: r.verbs,
          };
          if (r.shortNames) parent.shortNames = r.shortNames;
          if (r.categories) parent.categories = r.categories;
          list.push(parent);
          for (const sub of r.subresources ?? []) {
            const e: APIResource = {
              name: `${r.resource}/${sub.subresource}`,
              singularName: '',
              namespaced: parent.namespaced,
              kind: sub.responseKind.kind,
              verbs: sub.verbs,
            };
            if (sub.responseKind.group) e.group = sub.responseKind.group;
            if (sub.responseKind.version) e.version = sub.responseKind.version;
            list.push(e);
          }
        }
        out.set(g.metadata.name ? `${g.metadata.name}/${v.version}` : v.version, list);
      }
    }
    return out;
  }

  it('says exactly what per-group discovery says (as client-go converts it)', () => {
    const fromAggregated = new Map([
      ...split(aggregatedDiscovery('api')),
      ...split(aggregatedDiscovery('apis')),
    ]);
    const gvs = [...new Set(RESOURCES.map((r) => groupVersion(r)))];
    assert.deepEqual([...fromAggregated.keys()].sort(), [...gvs].sort());
    for (const r of RESOURCES) {
      const legacy = apiResourceList(r.group, r.version)!.resources.map((e) => {
        const copy = { ...e };
        delete copy.storageVersionHash;
        return copy;
      });
      assert.deepEqual(fromAggregated.get(groupVersion(r)), legacy, groupVersion(r));
    }
  });
});

describe('negotiation', () => {
  const cases: [string, string | undefined, boolean, DiscoveryFormat | undefined][] = [
    ['kubectl 1.32', KUBECTL_DISCOVERY_ACCEPT, true, { aggregated: true, version: 'v2' }],
    [
      'v2beta1 only (kubectl 1.26-1.29)',
      'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json',
      true,
      { aggregated: true, version: 'v2beta1' },
    ],
    [
      'parameters in any order',
      'application/json; as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io',
      true,
      { aggregated: true, version: 'v2' },
    ],
    ['plain JSON', 'application/json', true, { aggregated: false }],
    ['no Accept', undefined, true, { aggregated: false }],
    ['anything', '*/*', true, { aggregated: false }],
    [
      'kubectl accept where aggregation is not offered',
      KUBECTL_DISCOVERY_ACCEPT,
      false,
      { aggregated: false },
    ],
    ['protobuf only', 'application/vnd.kubernetes.protobuf', true, undefined],
    [
      'a conversion discovery does not offer',
      'application/json;as=Table;v=v1;g=meta.k8s.io',
      true,
      undefined,
    ],
    [
      'q values win over order',
      'application/json;q=0.5,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
      true,
      { aggregated: true, version: 'v2' },
    ],
    [
      'a concrete type before */* at the same q (goautoneg: q, then specificity)',
      '*/*,application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
      true,
      { aggregated: true, version: 'v2' },
    ],
    ['q=0 refuses a clause', 'application/json;q=0', true, undefined],
    [
      'an unknown aggregated version',
      'application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList',
      true,
      undefined,
    ],
  ];
  for (const [name, accept, allowAggregated, expected] of cases) {
    it(name, () => assert.deepEqual(negotiateDiscovery(accept, allowAggregated), expected));
  }
});

describe('discoveryResponse', () => {
  const cases: [string, string | undefined, number | undefined, string | undefined][] = [
    ['/version', undefined, 200, CONTENT_TYPE_JSON],
    ['/api', KUBECTL_DISCOVERY_ACCEPT, 200, CONTENT_TYPE_AGGREGATED_V2],
    ['/apis', KUBECTL_DISCOVERY_ACCEPT, 200, CONTENT_TYPE_AGGREGATED_V2],
    [
      '/apis',
      'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList',
      200,
      CONTENT_TYPE_AGGREGATED_V2BETA1,
    ],
    ['/api', 'application/json, */*', 200, CONTENT_TYPE_JSON],
    ['/apis/', undefined, 200, CONTENT_TYPE_JSON],
    ['/api/v1', 'application/json, */*', 200, CONTENT_TYPE_JSON],
    ['/apis/apps', undefined, 200, CONTENT_TYPE_JSON],
    ['/apis/apps/v1', undefined, 200, CONTENT_TYPE_JSON],
    ['/apis/apps/v1', KUBECTL_DISCOVERY_ACCEPT, 200, CONTENT_TYPE_JSON],
    ['/apis/networking.k8s.io/v1', undefined, 404, CONTENT_TYPE_JSON],
    ['/apis/networking.k8s.io', undefined, 404, CONTENT_TYPE_JSON],
    ['/api/v2', undefined, 404, CONTENT_TYPE_JSON],
    ['/api', 'application/vnd.kubernetes.protobuf', 406, CONTENT_TYPE_JSON],
    ['/api/v1/pods', undefined, undefined, undefined],
    ['/apis/apps/v1/deployments', undefined, undefined, undefined],
    ['/healthz', undefined, undefined, undefined],
  ];
  for (const [path, accept, status, contentType] of cases) {
    it(`${path} [${accept ?? 'no Accept'}] → ${status ?? 'not a discovery path'}`, () => {
      const res = discoveryResponse({ path, accept });
      assert.equal(res?.status, status);
      assert.equal(res?.headers['Content-Type'], contentType);
      if (res && res.status >= 400) assert.equal((JSON.parse(res.body) as { kind: string }).kind, 'Status');
    });
  }

  it('answers 304 to the current ETag, and the body matches the builder', () => {
    const first = discoveryResponse({ path: '/apis', accept: KUBECTL_DISCOVERY_ACCEPT })!;
    assert.deepEqual(JSON.parse(first.body), aggregatedDiscovery('apis'));
    assert.equal(first.headers['Vary'], 'Accept');
    const again = discoveryResponse({
      path: '/apis',
      accept: KUBECTL_DISCOVERY_ACCEPT,
      ifNoneMatch: first.headers['ETag'],
    })!;
    assert.equal(again.status, 304);
    assert.equal(again.body, '');
    const other = discoveryResponse({
      path: '/apis',
      accept: 'application/json',
      ifNoneMatch: first.headers['ETag'],
    })!;
    assert.equal(other.status, 200, 'the per-group form has its own ETag');
    assert.deepEqual(JSON.parse(other.body), apiGroupList());
  });
});

/** Parses kubectl's column output by the header's column offsets (empty cells allowed). */
function parseTable(out: string): Record<string, string>[] {
  const [header = '', ...rows] = out.trimEnd().split('\n');
  const starts = [...header.matchAll(/\S+/g)].map((m) => ({ name: m[0], at: m.index }));
  return rows.map((row) =>
    Object.fromEntries(
      starts.map((c, i) => [c.name, row.slice(c.at, starts[i + 1]?.at ?? row.length).trim()]),
    ),
  );
}

describe('real kubectl', { timeout: 120_000 }, () => {
  for (const mode of ['aggregated', 'per-group'] as const) {
    describe(`with ${mode} discovery`, () => {
      let server: DocsServer;
      let kubectl: Kubectl;
      before(async () => {
        server = await startDocsServer({ legacyDiscoveryOnly: mode === 'per-group' });
        kubectl = await kubectlFor(server.url);
      });
      after(async () => {
        await kubectl.cleanup();
        await server.close();
      });

      it('kubectl version shows the server version without a skew warning', async () => {
        const r = await kubectl.run(['version', '-o', 'json']);
        assert.equal(r.code, 0, r.stderr);
        const out = JSON.parse(r.stdout) as { serverVersion: { gitVersion: string; minor: string } };
        assert.equal(out.serverVersion.gitVersion, versionInfo().gitVersion);
        assert.doesNotMatch(r.stderr, /WARNING/);
      });

      it('kubectl api-resources lists every resource with its API version, scope, kind and short names', async () => {
        const before = server.requests.length;
        const r = await kubectl.run(['api-resources']);
        assert.equal(r.code, 0, r.stderr);
        const rows = parseTable(r.stdout);
        const expected: [string, string, string, string, string][] = [
          ['pods', 'po', 'v1', 'true', 'Pod'],
          ['deployments', 'deploy', 'apps/v1', 'true', 'Deployment'],
          ['replicasets', 'rs', 'apps/v1', 'true', 'ReplicaSet'],
          ['services', 'svc', 'v1', 'true', 'Service'],
          ['namespaces', 'ns', 'v1', 'false', 'Namespace'],
          ['nodes', 'no', 'v1', 'false', 'Node'],
          ['configmaps', 'cm', 'v1', 'true', 'ConfigMap'],
          ['endpoints', 'ep', 'v1', 'true', 'Endpoints'],
          ['secrets', '', 'v1', 'true', 'Secret'],
          ['horizontalpodautoscalers', 'hpa', 'autoscaling/v2', 'true', 'HorizontalPodAutoscaler'],
          ['leases', '', 'coordination.k8s.io/v1', 'true', 'Lease'],
          ['endpointslices', '', 'discovery.k8s.io/v1', 'true', 'EndpointSlice'],
          ['events', 'ev', 'events.k8s.io/v1', 'true', 'Event'],
          ['nodes', '', 'metrics.k8s.io/v1beta1', 'false', 'NodeMetrics'],
          ['pods', '', 'metrics.k8s.io/v1beta1', 'true', 'PodMetrics'],
        ];
        for (const [name, short, apiVersion, namespaced, kind] of expected) {
          const row = rows.find((x) => x['NAME'] === name && x['APIVERSION'] === apiVersion);
          assert.deepEqual(
            row,
            { NAME: name, SHORTNAMES: short, APIVERSION: apiVersion, NAMESPACED: namespaced, KIND: kind },
            `${name} in:\n${r.stdout}`,
          );
        }
        // kubectl lists each resource at its group's preferred version only (autoscaling/v2, not v1).
        const preferred = RESOURCES.filter((x) => !(x.group === 'autoscaling' && x.version === 'v1'));
        assert.equal(rows.length, preferred.length, 'no subresources, nothing twice');

        const paths = server.requests.slice(before).map((q) => q.path);
        if (mode === 'aggregated') {
          assert.ok(
            !paths.includes('/apis/apps/v1'),
            `aggregated discovery needs no per-group lists: ${paths}`,
          );
        } else {
          assert.ok(
            paths.includes('/api/v1') && paths.includes('/apis/apps/v1'),
            `per-group lists: ${paths}`,
          );
        }
      });

      it('kubectl api-resources --categories all lists the "all" category', async () => {
        const r = await kubectl.run(['api-resources', '--categories', 'all', '-o', 'name']);
        assert.equal(r.code, 0, r.stderr);
        assert.deepEqual(r.stdout.trim().split('\n').sort(), [
          'cronjobs.batch',
          'daemonsets.apps',
          'deployments.apps',
          'horizontalpodautoscalers.autoscaling',
          'jobs.batch',
          'pods',
          'replicasets.apps',
          'services',
          'statefulsets.apps',
        ]);
      });

      it('kubectl api-resources -o wide shows the verbs', async () => {
        const r = await kubectl.run(['api-resources', '-o', 'wide', '--api-group', '']);
        assert.equal(r.code, 0, r.stderr);
        const ns = parseTable(r.stdout).find((x) => x['NAME'] === 'namespaces');
        assert.equal(ns?.['VERBS'], 'create,delete,get,list,patch,update,watch');
      });
    });
  }
});
