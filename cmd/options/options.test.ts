// The commands' options as parsed, without running anything: every default of `k8ts server`
// and `k8ts agent` lands in the config the process starts from, and the checks run in order.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { primaryIPv4 } from '../../agent/kubelet/machine.js';
import { defaultResolvConf, parseAgentOptions } from './agent.js';
import { UsageError, defaultDataDir, parseDuration } from './common.js';
import { parseKubeconfigOptions } from './kubeconfig.js';
import { parseServerOptions } from './server.js';
import { parseTokenOptions } from './token.js';

describe('k8ts server options', () => {
  it('fills every default into the control config', async () => {
    assert.deepEqual(await parseServerOptions(['--disable-agent']), {
      control: {
        dataDir: defaultDataDir(),
        bindAddress: '0.0.0.0',
        port: 6443,
        datastore: 'sqlite',
        etcdEndpoints: [],
        logLevel: 'info',
        compactionIntervalSeconds: 300,
        minRequestTimeoutSeconds: 1800,
        leaderElection: { leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 2 },
        controllers: {
          nodeMonitorGracePeriodSeconds: 50,
          nodeMonitorPeriodSeconds: 5,
          nodeStartupGracePeriodSeconds: 60,
          terminatedPodGCThreshold: 12500,
          horizontalPodAutoscalerSyncPeriodSeconds: 15,
          clusterCIDR: '10.42.0.0/16',
        },
        defaultNotReadyTolerationSeconds: 300,
        defaultUnreachableTolerationSeconds: 300,
        disableControllerManager: false,
        disableScheduler: false,
        serviceClusterIPRange: '10.43.0.0/16',
        serviceNodePortRange: '30000-32767',
        // The bind address is loopback: the host's primary address is advertised.
        advertiseAddress: await primaryIPv4(),
        clusterDNS: '10.43.0.10',
        clusterDomain: 'cluster.local',
        tlsSANs: [],
        flannelBackend: 'vxlan',
        insecureHTTP: false,
        snapshots: {
          disabled: false,
          schedule: '0 */12 * * *',
          retention: 5,
          nodeName: hostname().toLowerCase(),
        },
      },
    });
  });

  it('--disable-local-storage: no local-path StorageClass at start', async () => {
    const o = await parseServerOptions(['--disable-agent', '--disable-local-storage']);
    assert.ok(o !== 'help');
    assert.equal(o.control.disableLocalStorage, true);
  });

  it('keeps the local node, with NodePorts on --node-ip', async () => {
    const options = await parseServerOptions(['--node-name', 'n1', '--node-ip', '10.0.0.5']);
    assert.notEqual(options, 'help');
    assert.deepEqual(options !== 'help' && options.localNode, {
      nodeName: 'n1',
      nodeIP: '10.0.0.5',
      nodePortAddress: '10.0.0.5',
      proxyMode: 'nftables',
      metricsBindAddress: { host: '127.0.0.1', port: 10249 },
    });
  });

  it("gives the local agent's kube-proxy --proxy-mode and --metrics-bind-address, as k8ts agent", async () => {
    const o = await parseServerOptions([
      '--node-name',
      'n1',
      '--proxy-mode',
      'userspace',
      '--metrics-bind-address',
      '0',
    ]);
    assert.ok(o !== 'help' && o.localNode);
    assert.equal(o.localNode.proxyMode, 'userspace');
    assert.equal(o.localNode.metricsBindAddress, undefined, '0: no metrics server');
    const other = await parseServerOptions(['--node-name', 'n1', '--metrics-bind-address', '0.0.0.0:10250']);
    assert.ok(other !== 'help');
    assert.deepEqual(other.localNode?.metricsBindAddress, { host: '0.0.0.0', port: 10250 });
  });

  it('advertises --advertise-address, else a usable bind address, else --node-ip; --cluster-dns follows the range', async () => {
    const control = async (...args: string[]) => {
      const o = await parseServerOptions(['--disable-agent', ...args]);
      assert.notEqual(o, 'help');
      return o !== 'help' ? o.control : undefined;
    };
    assert.equal((await control('--advertise-address', '192.0.2.7'))?.advertiseAddress, '192.0.2.7');
    assert.equal((await control('--bind-address', '192.0.2.8'))?.advertiseAddress, '192.0.2.8');
    assert.equal((await control('--node-ip', '192.0.2.9'))?.advertiseAddress, '192.0.2.9');
    assert.equal(
      (await control('--bind-address', '0.0.0.0', '--node-ip', '192.0.2.9'))?.advertiseAddress,
      '192.0.2.9',
    );
    const custom = await control(
      '--service-cluster-ip-range',
      '10.96.0.0/12',
      '--cluster-domain',
      'Example.ORG.',
    );
    assert.equal(custom?.clusterDNS, '10.96.0.10');
    assert.equal(custom?.clusterDomain, 'example.org');
    assert.equal((await control('--cluster-dns', '10.43.53.53'))?.clusterDNS, '10.43.53.53');
  });

  it('answers help for -h', async () => {
    assert.equal(await parseServerOptions(['-h']), 'help');
  });

  const refused: [string[], RegExp][] = [
    // Of two wrong flags, the first checked is reported.
    [['--disable-agent', '--datastore', 'x', '--port', 'p'], /^--port must be 0–65535, got p$/],
    [['--disable-agent', '--leader-elect-lease-duration', '1.5s'], /must be whole seconds, got 1.5s$/],
    [
      ['--disable-agent', '--leader-elect-renew-deadline', '20s'],
      /greater than 1.2 × --leader-elect-retry-period$/,
    ],
    [['--disable-agent', '--default-watch-cache-size', '0'], /positive number of events, got 0$/],
    [
      ['--node-name', 'n1', '--proxy-mode', 'ipvs'],
      /^--proxy-mode must be nftables, iptables or userspace, got "ipvs"/,
    ],
    [['--node-name', 'n1', '--metrics-bind-address', 'x'], /^--metrics-bind-address must be IP:port/],
    [
      ['--disable-agent', '--proxy-mode', 'iptables'],
      /^--proxy-mode is for the local agent, which --disable-agent/,
    ],
    [
      ['--disable-agent', '--cluster-cidr', '10.0.0.0/24'],
      /^--cluster-cidr 10.0.0.0\/24: it must hold at least/,
    ],
    [
      ['--disable-agent', '--flannel-backend', 'udp'],
      /^--flannel-backend must be one of vxlan, host-gw, none/,
    ],
    [['--disable-agent', '--terminated-pod-gc-threshold', '0'], /must be a whole number >= 1, got 0$/],
    [['--disable-agent', '--default-unreachable-toleration-seconds=-1'], /whole number >= 0, got -1$/],
    [
      ['--disable-agent', '--node-monitor-period', '0s'],
      /^--node-monitor-period must be a positive duration/,
    ],
    [
      ['--disable-agent', '--service-cluster-ip-range', '10.43.0.0'],
      /^--service-cluster-ip-range 10.43.0.0: /,
    ],
    [['--disable-agent', '--cluster-dns', '10.44.0.10'], /^--cluster-dns must be an IPv4 address inside/],
    [
      ['--disable-agent', '--cluster-dns', '10.43.0.1'],
      /^--cluster-dns 10.43.0.1 is the kubernetes Service's address/,
    ],
    [['--disable-agent', '--cluster-domain', 'a..b'], /^--cluster-domain must be a DNS domain/],
    [['--disable-agent', '--advertise-address', '127.0.0.1'], /^--advertise-address 127.0.0.1: .*loopback/],
    [
      ['--disable-agent', '--advertise-address', 'fd00::1'],
      /^--advertise-address fd00::1: it must be an IPv4/,
    ],
  ];
  for (const [args, message] of refused) {
    it(`refuses ${args.slice(1).join(' ')}`, async () => {
      await assert.rejects(
        parseServerOptions(args),
        (err: Error) => err instanceof UsageError && message.test(err.message),
      );
    });
  }
});

describe('k8ts agent DNS flags', () => {
  it('--cluster-dns is a list of IPs, --cluster-domain a domain, --resolv-conf a file or empty', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8ts-options-'));
    try {
      const base = ['--server', 'https://s:6443', '--token', 't', '--node-name', 'n', '--data-dir', dir];
      const o = await parseAgentOptions([
        ...base,
        '--cluster-dns',
        '10.43.0.10,fd00::10',
        '--cluster-domain',
        'k8s.test.',
        '--resolv-conf',
        '',
      ]);
      assert.ok(o !== 'help' && !('cleanup' in o));
      assert.deepEqual(o.dns, {
        clusterDNS: ['10.43.0.10', 'fd00::10'],
        clusterDomain: 'k8s.test',
        resolvConf: '',
      });
      await assert.rejects(
        parseAgentOptions([...base, '--cluster-dns', '10.43.0.x']),
        /--cluster-dns must be/,
      );
      await assert.rejects(
        parseAgentOptions([...base, '--cluster-domain', 'Bad_Domain']),
        /--cluster-domain must be/,
      );
      await assert.rejects(
        parseAgentOptions([...base, '--resolv-conf', join(dir, 'none')]),
        /--resolv-conf .*no such file/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it("defaults --resolv-conf to systemd-resolved's upstream file when /etc/resolv.conf is its stub (kubeadm)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8ts-options-'));
    try {
      const etc = join(dir, 'etc-resolv.conf');
      const resolved = join(dir, 'resolved.conf');
      writeFileSync(etc, 'nameserver 127.0.0.53\noptions edns0 trust-ad\n');
      assert.equal(defaultResolvConf(etc, resolved), etc);
      writeFileSync(resolved, 'nameserver 192.0.2.53\n');
      assert.equal(defaultResolvConf(etc, resolved), resolved);
      writeFileSync(etc, 'nameserver 192.0.2.1\n');
      assert.equal(defaultResolvConf(etc, resolved), etc);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('k8ts agent options', () => {
  it('fills the defaults and drops an empty token when the node credential is absent', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'k8ts-options-'));
    try {
      assert.deepEqual(
        await parseAgentOptions([
          '--server',
          'https://s:6443',
          '--token',
          't',
          '--node-name',
          'n',
          '--node-ip',
          '::1',
          '--data-dir',
          dir,
        ]),
        {
          disableClusterDNS: false,
          disableLocalStorage: false,
          server: 'https://s:6443',
          alternateServers: [],
          token: 't',
          nodeName: 'n',
          nodeIP: '::1',
          nodePortAddress: '::1',
          dataDir: dir,
          runtime: 'docker',
          proxyMode: 'nftables',
          metricsBindAddress: { host: '127.0.0.1', port: 10249 },
          dns: { clusterDNS: [], clusterDomain: 'cluster.local', resolvConf: defaultResolvConf() },
          logLevel: 'info',
        },
      );
      await assert.rejects(
        parseAgentOptions(['--server', 'https://s', '--token', 't', '--token-file', 'f']),
        /not both/,
      );
      // Several API servers of one cluster: the agent fails over between them.
      const several = await parseAgentOptions([
        '--server',
        'https://s:6443,https://t:6443',
        '--server',
        'https://u:6443',
        '--token',
        't',
        '--node-name',
        'n',
        '--node-ip',
        '::1',
        '--data-dir',
        dir,
      ]);
      assert.ok(several !== 'help' && !('cleanup' in several));
      assert.equal(several.server, 'https://s:6443');
      assert.deepEqual(several.alternateServers, ['https://t:6443', 'https://u:6443']);
      await assert.rejects(
        parseAgentOptions(['--server', 'https://s:6443,http://t:6443', '--token', 't']),
        /all API servers must be http:\/\/, or all https:\/\//,
      );
      const base = ['--server', 'https://s:6443', '--token', 't', '--node-name', 'n', '--node-ip', '::1'];
      const containerd = await parseAgentOptions([...base, '--data-dir', dir, '--runtime', 'containerd']);
      assert.ok(containerd !== 'help' && !('cleanup' in containerd));
      assert.equal(containerd.runtime, 'containerd');
      assert.equal(containerd.runtimeEndpoint, undefined);
      assert.deepEqual(containerd.cni, { confDir: '/etc/cni/net.d', binDir: '/usr/lib/cni' });
      const given = await parseAgentOptions([
        ...base,
        '--data-dir',
        dir,
        '--runtime',
        'containerd',
        '--container-runtime-endpoint',
        'unix:///tmp/c.sock',
        '--cni-conf-dir',
        '/tmp/net.d',
        '--cni-bin-dir',
        '/opt/cni/bin',
      ]);
      assert.ok(given !== 'help' && !('cleanup' in given));
      assert.equal(given.runtimeEndpoint, 'unix:///tmp/c.sock');
      assert.deepEqual(given.cni, { confDir: '/tmp/net.d', binDir: '/opt/cni/bin' });
      await assert.rejects(
        parseAgentOptions([...base, '--data-dir', dir, '--runtime', 'containerd', '--cni-bin-dir', 'cni']),
        /--cni-bin-dir must be an absolute path/,
      );
      await assert.rejects(
        parseAgentOptions([...base, '--data-dir', dir, '--container-runtime-endpoint', 'unix:///x.sock']),
        /is for --runtime containerd/,
      );
      const userspace = await parseAgentOptions([...base, '--data-dir', dir, '--proxy-mode', 'userspace']);
      assert.ok(userspace !== 'help' && !('cleanup' in userspace));
      assert.equal(userspace.proxyMode, 'userspace');
      const noDNS = await parseAgentOptions([...base, '--data-dir', dir, '--disable-cluster-dns']);
      assert.ok(noDNS !== 'help' && !('cleanup' in noDNS));
      assert.equal(noDNS.disableClusterDNS, true);
      const noStorage = await parseAgentOptions([...base, '--data-dir', dir, '--disable-local-storage']);
      assert.ok(noStorage !== 'help' && !('cleanup' in noStorage));
      assert.equal(noStorage.disableLocalStorage, true);
      const iptables = await parseAgentOptions([...base, '--data-dir', dir, '--proxy-mode', 'iptables']);
      assert.ok(iptables !== 'help' && !('cleanup' in iptables));
      assert.equal(iptables.proxyMode, 'iptables');
      await assert.rejects(
        parseAgentOptions([...base, '--data-dir', dir, '--proxy-mode', 'ipvs']),
        /--proxy-mode must be nftables, iptables or userspace, got "ipvs" \(k8ts programs the kernel with nftables or iptables, not IPVS\)/,
      );
      // An empty value names the allowed ones and says it is empty (found by a fresh tester).
      await assert.rejects(
        parseAgentOptions([...base, '--data-dir', dir, '--proxy-mode', '']),
        (err: Error) =>
          err instanceof UsageError &&
          err.message ===
            '--proxy-mode must be nftables, iptables or userspace, got "" (an empty value: leave the flag out for the default, nftables)',
      );
      // kube-proxy's --metrics-bind-address: 0 or '' turns the server off.
      const metricsAt = async (value: string) => {
        const o = await parseAgentOptions([...base, '--data-dir', dir, '--metrics-bind-address', value]);
        assert.ok(o !== 'help' && !('cleanup' in o));
        return o.metricsBindAddress;
      };
      assert.equal(await metricsAt('0'), undefined);
      assert.equal(await metricsAt(''), undefined);
      assert.deepEqual(await metricsAt('0.0.0.0:10249'), { host: '0.0.0.0', port: 10249 });
      assert.deepEqual(await metricsAt('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
      assert.deepEqual(await metricsAt('[::1]:9100'), { host: '::1', port: 9100 });
      for (const bad of [
        '10249',
        'localhost:10249',
        '127.0.0.1',
        '127.0.0.1:65536',
        '::1:10249',
        '[1.2.3.4]:1',
      ])
        await assert.rejects(
          metricsAt(bad),
          /--metrics-bind-address must be IP:port \(127\.0\.0\.1:10249, 0\.0\.0\.0:10249, \[::1\]:10249\), or 0 for none, got /,
          bad,
        );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('k8ts kubeconfig and token options', () => {
  it('parses a user with groups, and each token subcommand', () => {
    assert.deepEqual(
      parseKubeconfigOptions(['--data-dir', '/d', '--user', 'u', '--group', 'a', '--group', 'b']),
      {
        dataDir: '/d',
        user: { name: 'u', groups: ['a', 'b'] },
      },
    );
    assert.deepEqual(parseTokenOptions(['create', '--data-dir', '/d', '--ttl', '0m']), {
      command: 'create',
      dataDir: '/d',
      ttlSeconds: 0,
    });
    assert.deepEqual(
      parseTokenOptions(['create', '--data-dir', '/d', '--ttl', '1h30m', '--description', 'x']),
      {
        command: 'create',
        dataDir: '/d',
        ttlSeconds: 5400,
        description: 'x',
      },
    );
    assert.deepEqual(parseTokenOptions(['list', '--data-dir', '/d']), { command: 'list', dataDir: '/d' });
    assert.deepEqual(parseTokenOptions(['delete', 'abc', '--data-dir', '/d']), {
      command: 'delete',
      dataDir: '/d',
      id: 'abc',
    });
  });

  it('reads Go durations in seconds', () => {
    assert.equal(parseDuration('300ms', '--x'), 0.3);
    assert.equal(parseDuration('1h30m', '--x'), 5400);
    assert.throws(
      () => parseDuration('5x', '--x'),
      /^Error: --x must be a duration such as 30s, 5m or 1h, got "5x"$/,
    );
  });
});
