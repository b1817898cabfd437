/**
 * Test doubles for the agent's node-level tests: a runtime that answers only what node
 * registration, status and the pod network ask (version, status, ensurePodNetwork), with
 * failures a test can switch on, a made-up machine, and a logger that keeps its lines.
 * Pod-level tests use cri/fake's FakeRuntime instead.
 */
import type { Logger } from '../api/log.js';
import type { PodNetworkConfig, Runtime, RuntimeStatus } from '../cri/index.js';
import { CriError } from '../cri/index.js';
import type { MachineInfo, MachineProbe, MachineUsage } from './kubelet/machine.js';

const GI = 1024 ** 3;

/** A runtime that only knows its version, its status and pod networks; anything else throws. */
export class StubRuntime {
  /** When set, version() and status() reject with Unavailable and this message (the daemon is down). */
  down: string | undefined;
  /** What status() reports. */
  status_: RuntimeStatus = {
    conditions: [
      { type: 'RuntimeReady', status: true, reason: '', message: '' },
      { type: 'NetworkReady', status: true, reason: '', message: '' },
    ],
  };
  /** ensurePodNetwork() fails this many more times (FailedPrecondition). */
  networkFailures = 0;
  /** Every ensurePodNetwork() call, in order. */
  readonly networkCalls: PodNetworkConfig[] = [];
  closed = false;

  /** This stub as the Runtime the agent takes (only the node-level methods work). */
  asRuntime(): Runtime {
    return new Proxy(this, {
      get: (target, prop, receiver) => {
        if (prop in target) return Reflect.get(target, prop, receiver) as unknown;
        return () => Promise.reject(new Error(`StubRuntime: ${String(prop)} is not stubbed`));
      },
    }) as unknown as Runtime;
  }

  async version(): Promise<{ runtimeName: string; runtimeVersion: string; runtimeApiVersion: string }> {
    if (this.down !== undefined) throw new CriError('Unavailable', this.down);
    return { runtimeName: 'docker', runtimeVersion: '20.10.24', runtimeApiVersion: 'v1' };
  }

  async status(): Promise<RuntimeStatus> {
    if (this.down !== undefined) throw new CriError('Unavailable', this.down);
    return structuredClone(this.status_);
  }

  async ensurePodNetwork(config: PodNetworkConfig): Promise<void> {
    this.networkCalls.push(config);
    if (this.networkFailures > 0) {
      this.networkFailures--;
      throw new CriError('FailedPrecondition', 'network in use with another subnet');
    }
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** A machine with fixed facts; tests change `usage` to simulate pressure. */
export class StubMachine implements MachineProbe {
  info_: MachineInfo = {
    cpuCores: 4,
    memoryCapacityBytes: 8 * GI,
    fsCapacityBytes: 100 * GI,
    machineID: '3d1219c7c4c5404aaa1f6d2a48adfda4',
    systemUUID: 'ec2d3c4e-0000-4000-8000-000000000001',
    bootID: 'c0ffee00-0000-4000-8000-000000000002',
    kernelVersion: '6.1.0-18-amd64',
    osImage: 'Debian GNU/Linux 12 (bookworm)',
    architecture: 'amd64',
  };
  usage_: MachineUsage = {
    memoryAvailableBytes: 6 * GI,
    fsAvailableBytes: 60 * GI,
    fsCapacityBytes: 100 * GI,
    pidsInUse: 300,
    pidMax: 4_194_304,
  };
  usageCalls = 0;

  async info(): Promise<MachineInfo> {
    return structuredClone(this.info_);
  }

  async usage(): Promise<MachineUsage> {
    this.usageCalls++;
    return structuredClone(this.usage_);
  }
}

/** One captured log line. */
export interface LogLine {
  level: string;
  message: string;
  meta: Record<string, unknown>;
}

/** A logger that keeps what it is told (only the methods the agent uses). */
export function captureLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: string) =>
    (message: string, meta: Record<string, unknown> = {}) => {
      lines.push({ level, message, meta });
    };
  const logger = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
  return { logger: logger as unknown as Logger, lines };
}
