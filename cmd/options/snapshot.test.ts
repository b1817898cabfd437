// `k8ts snapshot`'s subcommands and `k8ts server`'s snapshot flags as parsed, without
// running anything: defaults, what each subcommand refuses, and the words of each refusal.
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { describe, it } from 'node:test';
import { UsageError, defaultDataDir } from './common.js';
import { parseServerOptions } from './server.js';
import { parseSnapshotOptions } from './snapshot.js';

describe('k8ts snapshot options', () => {
  it('save: on-demand by default, sqlite unless told, the hostname as node', () => {
    assert.deepEqual(parseSnapshotOptions(['save']), {
      command: 'save',
      dataDir: defaultDataDir(),
      datastore: 'sqlite',
      etcdEndpoints: [],
      nodeName: hostname().toLowerCase(),
    });
    assert.deepEqual(
      parseSnapshotOptions([
        'save',
        '--name',
        'pre-upgrade',
        '--data-dir',
        '/d',
        '--snapshot-dir',
        '/s',
        '--datastore',
        'etcd',
        '--etcd-endpoints',
        'http://a:2379,http://b:2379',
        '--node-name',
        'n1',
      ]),
      {
        command: 'save',
        dataDir: '/d',
        snapshotDir: '/s',
        name: 'pre-upgrade',
        datastore: 'etcd',
        etcdEndpoints: ['http://a:2379', 'http://b:2379'],
        nodeName: 'n1',
      },
    );
  });

  it('list (and ls), delete, prune with k3s defaults', () => {
    assert.deepEqual(parseSnapshotOptions(['ls', '--data-dir', '/d']), { command: 'list', dataDir: '/d' });
    assert.deepEqual(parseSnapshotOptions(['delete', 'a', 'b', '--data-dir', '/d']), {
      command: 'delete',
      dataDir: '/d',
      names: ['a', 'b'],
    });
    assert.deepEqual(parseSnapshotOptions(['prune', '--data-dir', '/d']), {
      command: 'prune',
      dataDir: '/d',
      name: 'on-demand',
      retention: 5,
    });
    assert.deepEqual(
      parseSnapshotOptions(['prune', '--data-dir', '/d', '--name', 'scheduled', '--snapshot-retention', '2']),
      {
        command: 'prune',
        dataDir: '/d',
        name: 'scheduled',
        retention: 2,
      },
    );
  });

  it('restore: one snapshot; an etcd member only with --etcd-data-dir', () => {
    assert.deepEqual(
      parseSnapshotOptions(['restore', 'on-demand-n-1', '--data-dir', '/d', '--bump-revision', '0']),
      {
        command: 'restore',
        dataDir: '/d',
        snapshot: 'on-demand-n-1',
        bumpRevision: 0,
      },
    );
    assert.deepEqual(
      parseSnapshotOptions([
        'restore',
        '/backups/x',
        '--data-dir',
        '/d',
        '--etcd-data-dir',
        '/var/lib/etcd-new',
        '--etcd-name',
        'm1',
        '--etcd-initial-cluster',
        'm1=http://10.0.0.1:2380',
      ]),
      {
        command: 'restore',
        dataDir: '/d',
        snapshot: '/backups/x',
        etcd: { dataDir: '/var/lib/etcd-new', name: 'm1', initialCluster: 'm1=http://10.0.0.1:2380' },
      },
    );
  });

  const refused: [string[], RegExp][] = [
    [[], /^usage: k8ts snapshot save/],
    [['backup'], /^usage: k8ts snapshot save/],
    [['list', '--retention', '3'], /snapshot list does not take --retention/],
    [['save', '--bump-revision', '3'], /snapshot save does not take --bump-revision/],
    [['save', 'extra'], /snapshot save takes no arguments, got extra/],
    [['save', '--datastore', 'memory'], /--datastore must be sqlite or etcd, got memory/],
    [['save', '--datastore', 'etcd'], /--datastore etcd needs --etcd-endpoints/],
    [['delete'], /snapshot delete takes one or more snapshot names/],
    [['prune', '--retention', '0'], /--retention must be a whole number >= 1, got 0/],
    [['restore'], /snapshot restore takes one snapshot/],
    [['restore', 'a', 'b'], /snapshot restore takes one snapshot/],
    [['restore', 'a', '--bump-revision', '1e9'], /--bump-revision must be a whole number/],
    [
      ['restore', 'a', '--etcd-name', 'm1'],
      /--etcd-name is for an etcd snapshot's new member: give --etcd-data-dir too/,
    ],
  ];
  for (const [argv, message] of refused) {
    it(`refuses ${JSON.stringify(argv)}`, () => {
      assert.throws(
        () => parseSnapshotOptions(argv),
        (err) => err instanceof UsageError && message.test(err.message),
      );
    });
  }
});

describe("k8ts server's snapshot flags", () => {
  const snapshots = async (...args: string[]) => {
    const o = await parseServerOptions(['--disable-agent', ...args]);
    assert.ok(o !== 'help');
    return o.control.snapshots;
  };

  it('takes a schedule, retention, dir and --disable-snapshots; names snapshots after --node-name', async () => {
    assert.deepEqual(
      await snapshots(
        '--snapshot-schedule',
        '@hourly',
        '--snapshot-retention',
        '2',
        '--snapshot-dir',
        '/backups',
        '--disable-snapshots',
        '--node-name',
        'cp-1',
      ),
      { disabled: true, schedule: '@hourly', retention: 2, dir: '/backups', nodeName: 'cp-1' },
    );
  });

  it('refuses a schedule that does not parse and a retention of 0, with the flag', async () => {
    await assert.rejects(
      snapshots('--snapshot-schedule', '0 */12 * *'),
      (err) =>
        err instanceof UsageError &&
        /^--snapshot-schedule: snapshot schedule "0 \*\/12 \* \*": /.test(err.message),
    );
    await assert.rejects(
      snapshots('--snapshot-retention', '0'),
      (err) =>
        err instanceof UsageError &&
        /--snapshot-retention must be a whole number >= 1, got 0/.test(err.message),
    );
  });
});
