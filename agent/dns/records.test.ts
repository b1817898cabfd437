/**
 * The records index and the answers made from it (records.ts, answer.ts), table-driven
 * against the Kubernetes DNS specification's records: ClusterIP A/SRV/PTR, headless A per
 * ready endpoint with hostnames and SRV per endpoint, ExternalName CNAME, pod names,
 * dns-version, NXDOMAIN vs NODATA with the SOA, case-insensitive names.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Answer } from 'dns-packet';
import type { EndpointSlice, Service } from '../../api/types.js';
import { answerFromIndex } from './answer.js';
import { ClusterRecords, podAddress, reverseName } from './records.js';

function service(name: string, spec: Service['spec'], ns = 'default'): Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns }, spec };
}

function slice(
  svc: string,
  endpoints: EndpointSlice['endpoints'],
  ports: EndpointSlice['ports'],
  ns = 'default',
): EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${svc}-abc`, namespace: ns, labels: { 'kubernetes.io/service-name': svc } },
    addressType: 'IPv4',
    endpoints,
    ports,
  };
}

function index(): ClusterRecords {
  const r = new ClusterRecords('cluster.local');
  r.setService(
    'default/web',
    service('web', {
      type: 'ClusterIP',
      clusterIP: '10.43.0.20',
      clusterIPs: ['10.43.0.20'],
      ports: [
        { name: 'http', port: 80, protocol: 'TCP' },
        { port: 81, protocol: 'TCP' },
      ],
    }),
    [],
  );
  r.setService(
    'db/pg',
    service(
      'pg',
      { clusterIP: 'None', clusterIPs: ['None'], ports: [{ name: 'sql', port: 5432, protocol: 'TCP' }] },
      'db',
    ),
    [
      slice(
        'pg',
        [
          { addresses: ['10.1.0.5'], hostname: 'pg-0', conditions: { ready: true } },
          { addresses: ['10.1.0.6'], conditions: { ready: true } },
          { addresses: ['10.1.0.7'], hostname: 'pg-2', conditions: { ready: false } },
        ],
        [{ name: 'sql', port: 5433, protocol: 'TCP' }],
        'db',
      ),
    ],
  );
  r.setService('default/ext', service('ext', { type: 'ExternalName', externalName: 'example.test.' }), []);
  r.setService(
    'default/alias',
    service('alias', { type: 'ExternalName', externalName: 'web.default.svc.cluster.local' }),
    [],
  );
  return r;
}

const data = (answers: Answer[]) =>
  answers.map((a) => `${a.name} ${a.type} ${JSON.stringify((a as { data: unknown }).data)}`);

describe('ClusterRecords and answerFromIndex', () => {
  const r = index();
  const cases: {
    name: string;
    type: string;
    rcode: string;
    answers: string[];
    soa?: boolean;
    additionals?: string[];
  }[] = [
    {
      name: 'web.default.svc.cluster.local',
      type: 'A',
      rcode: 'NOERROR',
      answers: ['web.default.svc.cluster.local A "10.43.0.20"'],
    },
    {
      name: 'WEB.Default.SVC.cluster.local.',
      type: 'A',
      rcode: 'NOERROR',
      answers: ['WEB.Default.SVC.cluster.local A "10.43.0.20"'],
    },
    { name: 'web.default.svc.cluster.local', type: 'AAAA', rcode: 'NOERROR', answers: [], soa: true },
    {
      name: '_http._tcp.web.default.svc.cluster.local',
      type: 'SRV',
      rcode: 'NOERROR',
      answers: [
        '_http._tcp.web.default.svc.cluster.local SRV {"priority":0,"weight":100,"port":80,"target":"web.default.svc.cluster.local"}',
      ],
      additionals: ['web.default.svc.cluster.local A "10.43.0.20"'],
    },
    {
      name: '20.0.43.10.in-addr.arpa',
      type: 'PTR',
      rcode: 'NOERROR',
      answers: ['20.0.43.10.in-addr.arpa PTR "web.default.svc.cluster.local"'],
    },
    {
      name: 'pg.db.svc.cluster.local',
      type: 'A',
      rcode: 'NOERROR',
      answers: ['pg.db.svc.cluster.local A "10.1.0.5"', 'pg.db.svc.cluster.local A "10.1.0.6"'],
    },
    {
      name: 'pg-0.pg.db.svc.cluster.local',
      type: 'A',
      rcode: 'NOERROR',
      answers: ['pg-0.pg.db.svc.cluster.local A "10.1.0.5"'],
    },
    {
      name: '10-1-0-6.pg.db.svc.cluster.local',
      type: 'A',
      rcode: 'NOERROR',
      answers: ['10-1-0-6.pg.db.svc.cluster.local A "10.1.0.6"'],
    },
    { name: 'pg-2.pg.db.svc.cluster.local', type: 'A', rcode: 'NXDOMAIN', answers: [], soa: true },
    {
      name: '_sql._tcp.pg.db.svc.cluster.local',
      type: 'SRV',
      rcode: 'NOERROR',
      answers: [
        '_sql._tcp.pg.db.svc.cluster.local SRV {"priority":0,"weight":50,"port":5433,"target":"pg-0.pg.db.svc.cluster.local"}',
        '_sql._tcp.pg.db.svc.cluster.local SRV {"priority":0,"weight":50,"port":5433,"target":"10-1-0-6.pg.db.svc.cluster.local"}',
      ],
      additionals: [
        'pg-0.pg.db.svc.cluster.local A "10.1.0.5"',
        '10-1-0-6.pg.db.svc.cluster.local A "10.1.0.6"',
      ],
    },
    {
      name: '5.0.1.10.in-addr.arpa',
      type: 'PTR',
      rcode: 'NOERROR',
      answers: ['5.0.1.10.in-addr.arpa PTR "pg-0.pg.db.svc.cluster.local"'],
    },
    {
      name: 'ext.default.svc.cluster.local',
      type: 'A',
      rcode: 'NOERROR',
      answers: ['ext.default.svc.cluster.local CNAME "example.test"'],
    },
    {
      name: 'alias.default.svc.cluster.local',
      type: 'A',
      rcode: 'NOERROR',
      answers: [
        'alias.default.svc.cluster.local CNAME "web.default.svc.cluster.local"',
        'web.default.svc.cluster.local A "10.43.0.20"',
      ],
    },
    {
      name: '10-2-3-4.default.pod.cluster.local',
      type: 'A',
      rcode: 'NOERROR',
      answers: ['10-2-3-4.default.pod.cluster.local A "10.2.3.4"'],
    },
    { name: '10-2-3-999.default.pod.cluster.local', type: 'A', rcode: 'NXDOMAIN', answers: [], soa: true },
    {
      name: 'dns-version.cluster.local',
      type: 'TXT',
      rcode: 'NOERROR',
      answers: ['dns-version.cluster.local TXT "1.1.0"'],
    },
    // Empty non-terminals exist: NODATA, not NXDOMAIN.
    { name: 'default.svc.cluster.local', type: 'A', rcode: 'NOERROR', answers: [], soa: true },
    { name: 'svc.cluster.local', type: 'A', rcode: 'NOERROR', answers: [], soa: true },
    { name: 'default.pod.cluster.local', type: 'A', rcode: 'NOERROR', answers: [], soa: true },
    { name: 'nope.default.svc.cluster.local', type: 'A', rcode: 'NXDOMAIN', answers: [], soa: true },
    { name: 'web.nope.svc.cluster.local', type: 'A', rcode: 'NXDOMAIN', answers: [], soa: true },
    { name: 'cluster.local', type: 'SOA', rcode: 'NOERROR', answers: ['cluster.local SOA'] },
  ];
  for (const c of cases) {
    it(`${c.name} ${c.type} → ${c.rcode}`, () => {
      const a = answerFromIndex(r, { name: c.name, type: c.type as 'A' });
      assert.ok(a, 'in-zone names are answered');
      assert.equal(a.rcode, c.rcode);
      if (c.type === 'SOA')
        assert.deepEqual(
          a.answers.map((x) => `${x.name} ${x.type}`),
          c.answers,
        );
      else assert.deepEqual(data(a.answers), c.answers);
      assert.equal(a.authorities.length > 0 && a.authorities[0]!.type === 'SOA', c.soa === true);
      if (c.additionals) assert.deepEqual(data(a.additionals), c.additionals);
    });
  }

  it('leaves names outside the zone to the forwarder, and chases ExternalNames outside it', () => {
    assert.equal(answerFromIndex(r, { name: 'example.test', type: 'A' }), undefined);
    assert.equal(answerFromIndex(r, { name: '1.1.168.192.in-addr.arpa', type: 'PTR' }), undefined);
    assert.equal(
      answerFromIndex(r, { name: 'ext.default.svc.cluster.local', type: 'A' })?.chase,
      'example.test',
    );
  });

  it('replaces and removes a Service’s records, and bumps the generation', () => {
    const x = index();
    const g = x.generation;
    x.setService('default/web', service('web', { clusterIP: '10.43.0.21', ports: [] }), []);
    assert.deepEqual(x.lookup('web.default.svc.cluster.local').A, ['10.43.0.21']);
    assert.deepEqual(x.lookup('20.0.43.10.in-addr.arpa').PTR, []);
    assert.equal(x.exists('_http._tcp.web.default.svc.cluster.local'), false);
    x.setService('default/web', undefined, []);
    x.setService('default/ext', undefined, []);
    x.setService('default/alias', undefined, []);
    assert.equal(x.exists('web.default.svc.cluster.local'), false);
    assert.equal(x.exists('default.svc.cluster.local'), false, 'the namespace goes with its last Service');
    assert.equal(x.exists('db.svc.cluster.local'), true);
    assert.ok(x.generation > g);
  });

  it('publishNotReadyAddresses serves not-ready endpoints', () => {
    const x = new ClusterRecords('cluster.local');
    x.setService('db/pg', service('pg', { clusterIP: 'None', publishNotReadyAddresses: true }, 'db'), [
      slice('pg', [{ addresses: ['10.1.0.7'], hostname: 'pg-2', conditions: { ready: false } }], [], 'db'),
    ]);
    assert.deepEqual(x.lookup('pg-2.pg.db.svc.cluster.local').A, ['10.1.0.7']);
  });

  it('helpers', () => {
    assert.equal(reverseName('10.43.0.20'), '20.0.43.10.in-addr.arpa');
    assert.equal(reverseName('fd00::1'), undefined);
    assert.equal(podAddress('1-2-3-4.x.pod.cluster.local', 'cluster.local'), '1.2.3.4');
    assert.equal(podAddress('1-2-3.x.pod.cluster.local', 'cluster.local'), undefined);
    assert.throws(() => new ClusterRecords('bad zone'), /not a DNS name/);
  });
});
