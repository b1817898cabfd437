/**
 * The figures behind `GET /stats/summary` (api/stats.ts): node CPU from /proc/stat and
 * memory from systeminformation (through the MachineProbe), each running container's
 * from the runtime's ContainerStats. CPU is a rate, so it needs two samples: a summary
 * is taken against the previous one when that is between `minWindowMs` and `maxWindowMs`
 * old, otherwise a fresh pair `minWindowMs` apart is taken — as metrics-server averages
 * the kubelet's cumulative counters between two scrapes.
 */
import { readFile } from 'node:fs/promises';
import { realClock, type Clock } from '../../../api/clock.js';
import type { StatsSummary, UsageSample } from '../../../api/stats.js';
import type { Runtime } from '../../../cri/index.js';
import type { MachineProbe } from '../machine.js';
import { CONTAINER_NAME_LABEL, POD_NAME_LABEL, POD_NAMESPACE_LABEL, POD_UID_LABEL } from '../pods/labels.js';

/** Nanoseconds per clock tick of /proc/stat (USER_HZ, 100 on every Linux architecture k8ts runs on). */
const NS_PER_TICK = 10_000_000n;

/**
 * Cumulative busy CPU time of the host, nanoseconds, from the first line of /proc/stat
 * (user, nice, system, irq, softirq — not idle, iowait or steal, which are time the host
 * did not run; guest time is already inside user). The root cgroup's usage, which the
 * kubelet reports, counts the same.
 */
export function parseProcStatCpu(procStat: string): bigint {
  const line = procStat.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) throw new Error('/proc/stat has no cpu line');
  const f = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map((x) => BigInt(x));
  const [user = 0n, nice = 0n, system = 0n, , , irq = 0n, softirq = 0n] = f;
  return (user + nice + system + irq + softirq) * NS_PER_TICK;
}

interface ContainerSample {
  pod: { name: string; namespace: string; uid: string };
  name: string;
  cpuNs: bigint;
  workingSetBytes: number;
}

interface Sample {
  /** ms since the epoch. */
  at: number;
  nodeCpuNs: bigint;
  nodeWorkingSetBytes: number;
  containers: Map<string, ContainerSample>;
}

export interface StatsProviderConfig {
  runtime: Runtime;
  machine: MachineProbe;
  nodeName: string;
  clock?: Clock;
  /** Cumulative node CPU, ns; default parseProcStatCpu of /proc/stat. */
  nodeCpuUsage?: () => Promise<bigint>;
  /** Shortest window, ms; default 1000. */
  minWindowMs?: number;
  /** A previous sample older than this is not used, ms; default 60 000. */
  maxWindowMs?: number;
}

/** See the file comment. */
export class StatsProvider {
  private readonly cfg: StatsProviderConfig;
  private last: Sample | undefined;
  private inFlight: Promise<StatsSummary> | undefined;
  private info: ReturnType<MachineProbe['info']> | undefined;

  constructor(cfg: StatsProviderConfig) {
    this.cfg = cfg;
  }

  /** The node's summary now (concurrent callers share one computation). */
  summary(): Promise<StatsSummary> {
    this.inFlight ??= this.compute().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async compute(): Promise<StatsSummary> {
    const clock = this.cfg.clock ?? realClock;
    const minMs = this.cfg.minWindowMs ?? 1000;
    const maxMs = this.cfg.maxWindowMs ?? 60_000;
    let before = this.last;
    const age = before ? clock.now() - before.at : Infinity;
    if (!before || age > maxMs) before = await this.sample();
    const wait = minMs - (clock.now() - before.at);
    if (wait > 0) await clock.sleep(wait);
    const after = await this.sample();
    this.last = after;
    const windowSeconds = (after.at - before.at) / 1000;
    const time = new Date(after.at).toISOString();
    const rate = (a: bigint, b: bigint) =>
      windowSeconds > 0 ? Math.max(0, Number(b - a) / windowSeconds) : 0;
    const node: StatsSummary['node'] = {
      nodeName: this.cfg.nodeName,
      time,
      windowSeconds,
      usageNanoCores: Math.round(rate(before.nodeCpuNs, after.nodeCpuNs)),
      workingSetBytes: after.nodeWorkingSetBytes,
    };
    const pods = new Map<string, StatsSummary['pods'][number]>();
    for (const [id, c] of after.containers) {
      const prev = before.containers.get(id);
      const usage: UsageSample = {
        time,
        windowSeconds,
        usageNanoCores: prev ? Math.round(rate(prev.cpuNs, c.cpuNs)) : 0,
        workingSetBytes: c.workingSetBytes,
      };
      let pod = pods.get(c.pod.uid);
      if (!pod) pods.set(c.pod.uid, (pod = { podRef: c.pod, containers: [] }));
      pod.containers.push({ name: c.name, ...usage });
    }
    return { node, pods: [...pods.values()] };
  }

  private async sample(): Promise<Sample> {
    const clock = this.cfg.clock ?? realClock;
    const { runtime, machine } = this.cfg;
    const [cpuNs, info, usage, running] = await Promise.all([
      this.cfg.nodeCpuUsage ? this.cfg.nodeCpuUsage() : readFile('/proc/stat', 'utf8').then(parseProcStatCpu),
      (this.info ??= machine.info()),
      machine.usage(),
      runtime.listContainers({ state: 'CONTAINER_RUNNING' }),
    ]);
    const containers = new Map<string, ContainerSample>();
    await Promise.all(
      running.map(async (c) => {
        try {
          const s = await runtime.containerStats(c.id);
          containers.set(c.id, {
            pod: {
              name: c.labels[POD_NAME_LABEL] ?? '',
              namespace: c.labels[POD_NAMESPACE_LABEL] ?? '',
              uid: c.labels[POD_UID_LABEL] ?? '',
            },
            name: c.labels[CONTAINER_NAME_LABEL] ?? c.metadata.name,
            cpuNs: s.cpuUsageCoreNanoSeconds,
            workingSetBytes: s.memoryWorkingSetBytes,
          });
        } catch {
          // Gone between list and stats: not reported.
        }
      }),
    );
    return {
      at: clock.now(),
      nodeCpuNs: cpuNs,
      nodeWorkingSetBytes: Math.max(0, info.memoryCapacityBytes - usage.memoryAvailableBytes),
      containers,
    };
  }
}
