/**
 * The kubelet-managed /etc/hosts (etc-hosts.ts), after kubelet_pods_test.go
 * TestManagedHostsFileContent and TestNodeHostsFileContent.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ensureHostsFile, managedHostsFileContent } from './etc-hosts.js';

const HEAD = `# Kubernetes-managed hosts file.
127.0.0.1\tlocalhost
::1\tlocalhost ip6-localhost ip6-loopback
fe00::0\tip6-localnet
fe00::0\tip6-mcastprefix
fe00::1\tip6-allnodes
fe00::2\tip6-allrouters
`;

describe('managedHostsFileContent', () => {
  it('the pod IP with its hostname', () => {
    assert.equal(managedHostsFileContent(['10.42.0.5'], 'web-0', ''), `${HEAD}10.42.0.5\tweb-0\n`);
  });
  it('with a subdomain the FQDN comes first, then the hostAliases', () => {
    assert.equal(
      managedHostsFileContent(['10.42.0.5'], 'db', 'dbs.shop.svc.cluster.local', [
        { ip: '192.0.2.1', hostnames: ['foo.local', 'bar.local'] },
      ]),
      `${HEAD}10.42.0.5\tdb.dbs.shop.svc.cluster.local\tdb\n\n# Entries added by HostAliases.\n192.0.2.1\tfoo.local\tbar.local\n`,
    );
  });
});

describe('ensureHostsFile', () => {
  it('writes <podDir>/etc-hosts and mounts it, but not without a pod IP or over a container /etc/hosts mount', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8ts-hosts-'));
    try {
      const input = {
        podDir: join(dir, 'pod'),
        podIPs: ['10.42.0.5'],
        hostname: 'web-0',
        domain: '',
        hostNetwork: false,
      };
      const mount = await ensureHostsFile({ name: 'app' }, input);
      assert.deepEqual(mount, {
        containerPath: '/etc/hosts',
        hostPath: join(dir, 'pod', 'etc-hosts'),
        readonly: false,
      });
      assert.equal(readFileSync(mount.hostPath, 'utf8'), `${HEAD}10.42.0.5\tweb-0\n`);
      assert.equal(await ensureHostsFile({ name: 'app' }, { ...input, podIPs: [''] }), undefined);
      const own = { name: 'app', volumeMounts: [{ name: 'h', mountPath: '/etc/hosts' }] };
      assert.equal(await ensureHostsFile(own, input), undefined);
      const nodeHosts = join(dir, 'hosts');
      writeFileSync(nodeHosts, '127.0.0.1\tlocalhost\n192.0.2.10\tnode-a\n');
      const host = await ensureHostsFile(
        { name: 'app' },
        { ...input, hostNetwork: true, nodeHostsPath: nodeHosts },
      );
      assert.equal(
        readFileSync(host!.hostPath, 'utf8'),
        '# Kubernetes-managed hosts file (host network).\n127.0.0.1\tlocalhost\n192.0.2.10\tnode-a\n',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
