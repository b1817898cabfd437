/**
 * The fake runtime's state (runtime.ts): its sandboxes, containers, images, pod networks
 * and test settings, in memory. Kept apart from FakeRuntime so that every instance
 * `reopen()` returns shares it, as a restarted agent finds its runtime's containers again.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../../api/clock.js';
import type {
  AuthConfig,
  ContainerConfig,
  ContainerState,
  ExecSyncResponse,
  PodNetworkConfig,
  PodSandboxConfig,
  PodSandboxState,
  RuntimeConditionType,
} from '../api.js';
import { CriError } from '../errors.js';
import { familiarName, parseImageReference } from '../reference.js';
import { FakeIpam } from './ipam.js';
import type { FakeStep } from './process.js';

/** Configuration of a FakeRuntime. */
export interface FakeRuntimeOptions {
  /** Source of timestamps and of program sleeps / pull delays (default: the real clock). */
  clock?: Clock;
  /** Image references present from the start (e.g. `['k8ts/pause:1.0', 'spring-server:1.0']`). */
  images?: string[];
  /** Image references a pull can fetch; pulling any other one fails ImagePullFailed. */
  registry?: string[];
  /** Addresses of sandboxes that name no pod network come from this IPv4 range (default `10.88.0.0/16`). */
  podCIDR?: string;
  /** How long each pull takes on `clock`, milliseconds (default 0). */
  pullDelayMs?: number;
  /**
   * Every reference can be pulled, as from a registry that has every image (hollow nodes
   * run whatever the cluster's pods name); default false: only `registry`'s.
   */
  pullAny?: boolean;
  /**
   * What a container runs whose program the fake does not model to an end (a server image,
   * an unknown command: process.ts's `serve`, running until stopped): the steps returned
   * instead, or undefined to keep it running. Hollow nodes end the containers of Job pods
   * this way.
   */
  unmodelledProgram?: FakeProgramHook;
}

/** See FakeRuntimeOptions.unmodelledProgram. */
export type FakeProgramHook = (
  container: ContainerConfig,
  sandbox: PodSandboxConfig,
) => FakeStep[] | undefined;

/** What a test's exec handler returns; undefined falls back to the fake programs. */
export type FakeExecHandler = (
  containerId: string,
  cmd: string[],
) => ExecSyncResponse | undefined | Promise<ExecSyncResponse | undefined>;

/** A sandbox as the fake keeps it. */
export interface FakeSandbox {
  id: string;
  config: PodSandboxConfig;
  state: PodSandboxState;
  createdAt: bigint;
  ip: string;
}

/** A container as the fake keeps it. */
export interface FakeContainer {
  id: string;
  podSandboxId: string;
  config: ContainerConfig;
  imageRef: string;
  state: ContainerState;
  createdAt: bigint;
  startedAt: bigint;
  finishedAt: bigint;
  exitCode: number;
  reason: string;
  message: string;
  /** Aborts the running program (stop, forced exit, removal). */
  kill?: AbortController;
  output: string;
  stats: { cpuUsageCoreNanoSeconds: bigint; memoryWorkingSetBytes: number };
}

/** An image as the fake keeps it. */
export interface FakeImage {
  id: string;
  repoTags: string[];
  size: number;
}

/** Runtime state shared by every FakeRuntime opened over it (see `reopen()`). */
export class FakeRuntimeState {
  readonly sandboxes = new Map<string, FakeSandbox>();
  readonly containers = new Map<string, FakeContainer>();
  /** By image id. */
  readonly images = new Map<string, FakeImage>();
  readonly registry: Set<string>;
  readonly pullFailures = new Map<string, string>();
  /** Every reference pulled successfully, in order (for pull-policy tests). */
  readonly pulls: string[] = [];
  /** The AuthConfig of every pull attempt, in order (undefined: none). */
  readonly pullAuths: (AuthConfig | undefined)[] = [];
  /** Images whose pulls need `user:password` (familiar name → base64 of it, docker's `auth`). */
  readonly pullCredentials = new Map<string, string>();
  readonly conditions: Record<RuntimeConditionType, { status: boolean; reason: string; message: string }> = {
    RuntimeReady: { status: true, reason: '', message: '' },
    NetworkReady: { status: true, reason: '', message: '' },
  };
  unavailable = false;
  execHandler: FakeExecHandler | undefined;
  /** See FakeRuntimeOptions.pullAny. */
  pullAny = false;
  /** See FakeRuntimeOptions.unmodelledProgram. */
  unmodelledProgram: FakeProgramHook | undefined;
  /** The pod networks ensured, by name. */
  readonly networks = new Map<string, { config: PodNetworkConfig; ipam: FakeIpam }>();
  /** Addresses of sandboxes that name no network. */
  readonly defaultIpam: FakeIpam;

  constructor(
    readonly clock: Clock,
    readonly pullDelayMs: number,
    podCIDR: string,
    images: string[],
    registry: string[],
  ) {
    this.defaultIpam = new FakeIpam(podCIDR);
    this.registry = new Set(registry.map((r) => familiarName(parseImageReference(r))));
    for (const ref of images) this.addImage(ref);
  }

  /** Makes `ref` present, as a pull or `docker load` would; returns its id. */
  addImage(ref: string): string {
    const name = familiarName(parseImageReference(ref));
    const present = this.findImage(name);
    if (present) return present.id;
    const id = 'sha256:' + createHash('sha256').update(name).digest('hex');
    this.images.set(id, {
      id,
      repoTags: [name],
      size: 1_000_000 + (parseInt(id.slice(7, 12), 16) % 1_000_000),
    });
    return id;
  }

  /** The image `ref` (a reference or an id) names, if present. */
  findImage(ref: string): FakeImage | undefined {
    const byId = this.images.get(ref) ?? this.images.get(`sha256:${ref}`);
    if (byId) return byId;
    const name = familiarName(parseImageReference(ref));
    for (const img of this.images.values()) if (img.repoTags.includes(name)) return img;
    return undefined;
  }

  /** The allocator of sandboxes on `network` ('' or undefined: the default pod CIDR). */
  ipamFor(network: string | undefined): FakeIpam {
    if (!network) return this.defaultIpam;
    const n = this.networks.get(network);
    if (!n) throw new CriError('NotFound', `network ${JSON.stringify(network)} not found`);
    return n.ipam;
  }
}
