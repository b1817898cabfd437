/**
 * The resources CustomResourceDefinitions define, served with nothing restarted (upstream's
 * apiextensions-apiserver crdHandler and its DiscoveryController): this table follows every
 * CRD through the API server's watch cache of CRDs, so every API server over one store
 * serves the same custom resources, and tells the server which ResourceInfos to register
 * (a Registry and a watch cache each) or drop.
 *
 * A CRD is served once it is Established, under its `status.acceptedNames`, one
 * ResourceInfo per served version; everything the request path needs about the version
 * (its schema, subresources, printer columns) travels on `ResourceInfo.custom`. A change of
 * the CRD that changes what is served (spec, accepted names, conditions, deletion) replaces
 * its ResourceInfos: their watch caches are stopped (watchers end and clients watch again,
 * as upstream tears down a CRD's storage on change) and new ones start.
 *
 *   CRD watch cache ──events──▶ CustomResources.apply(crd) ──▶ onChange(added, removed)
 *                                      │                           (server: registries, caches)
 *                                      └──▶ find(group, version, plural)   (request routing)
 *                                           served()                       (discovery, OpenAPI)
 */
import type { KubeObject } from '../../../api/object.js';
import { ALL_VERBS, type ResourceInfo, type Subresource } from '../resources.js';
import { customResourcePrinter } from './printer.js';
import {
  isCRDConditionTrue,
  storageVersionOf,
  type CustomResourceDefinition,
  type CustomResourceDefinitionNames,
  type CustomResourceDefinitionVersion,
} from './types.js';

/**
 * Orders versions as Kubernetes does (version.CompareKubeAwareVersionStrings): GA before
 * beta before alpha, higher numbers first within each, then anything else alphabetically.
 */
export function compareKubeAwareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    const rank = m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1;
    return { major: Number(m[1]), rank, minor: Number(m[3] ?? 0) };
  };
  const x = parse(a);
  const y = parse(b);
  if (x && !y) return -1;
  if (!x && y) return 1;
  if (!x || !y) return a < b ? -1 : a > b ? 1 : 0;
  if (x.rank !== y.rank) return y.rank - x.rank;
  if (x.major !== y.major) return y.major - x.major;
  return y.minor - x.minor;
}

/**
 * The Warning every request to a deprecated version of a custom resource gets (the CRD
 * handler's, apiextensions-apiserver crd_handler.go): the version's deprecationWarning, else
 * `<group>/<version> <Kind> is deprecated`, with `; use <group>/<v> <Kind>` naming the most
 * preferred served, not deprecated version newer than it. Undefined for any other resource.
 */
export function deprecationWarningOf(resource: ResourceInfo): string | undefined {
  const custom = resource.custom;
  if (custom?.version.deprecated !== true) return undefined;
  if (typeof custom.version.deprecationWarning === 'string') return custom.version.deprecationWarning;
  const { group } = resource;
  const kind = custom.crd.spec.names?.kind ?? resource.kind;
  const name = custom.version.name;
  const msg = `${group}/${name} ${kind} is deprecated`;
  const newer = (custom.crd.spec.versions ?? [])
    .filter((v) => v.served === true && v.deprecated !== true && compareKubeAwareVersions(v.name, name) < 0)
    .map((v) => v.name)
    .sort(compareKubeAwareVersions);
  return newer[0] === undefined ? msg : `${msg}; use ${group}/${newer[0]} ${kind}`;
}

/**
 * The ResourceInfos a CRD serves now: one per served version, preferred version first,
 * under its accepted names; none until it is Established or when it is invalid.
 */
export function resourceInfosOf(crd: CustomResourceDefinition): ResourceInfo[] {
  if (!isCRDConditionTrue(crd, 'Established')) return [];
  const names = crd.status?.acceptedNames;
  if (!names) return [];
  return (crd.spec.versions ?? [])
    .filter((v) => v.served === true)
    .sort((a, b) => compareKubeAwareVersions(a.name, b.name))
    .map((v) => infoFor(crd, v, names))
    .filter((r): r is ResourceInfo => r !== undefined);
}

/**
 * The ResourceInfo of the CRD's storage version under its spec's names, served or not:
 * what the finalizer controller lists and deletes the CRD's objects through.
 */
export function storageResourceInfo(crd: CustomResourceDefinition): ResourceInfo | undefined {
  const v = crd.spec.versions?.find((x) => x.storage === true);
  return v && crd.spec.names ? infoFor(crd, v, crd.spec.names) : undefined;
}

function infoFor(
  crd: CustomResourceDefinition,
  v: CustomResourceDefinitionVersion,
  names: CustomResourceDefinitionNames,
): ResourceInfo | undefined {
  const storageVersion = storageVersionOf(crd);
  const group = crd.spec.group;
  if (!names.plural || !names.kind || !storageVersion || !group) return undefined;
  const subresources: Subresource[] = [];
  if (v.subresources?.scale) subresources.push('scale');
  if (v.subresources?.status !== undefined) subresources.push('status');
  return {
    group,
    version: v.name,
    resource: names.plural,
    singular: names.singular ?? names.kind.toLowerCase(),
    kind: names.kind,
    listKind: names.listKind ?? `${names.kind}List`,
    namespaced: crd.spec.scope !== 'Cluster',
    shortNames: [...(names.shortNames ?? [])],
    categories: [...(names.categories ?? [])],
    verbs: ALL_VERBS,
    subresources,
    model: '',
    custom: { crd, version: v, storageVersion },
    printer: customResourcePrinter(v.additionalPrinterColumns),
  };
}

/** What changes what a CRD serves (not its managedFields, resourceVersion or condition times). */
function servingFingerprint(crd: CustomResourceDefinition): string {
  return JSON.stringify([
    crd.metadata?.uid,
    crd.spec,
    crd.status?.acceptedNames,
    isCRDConditionTrue(crd, 'Established'),
    crd.metadata?.deletionTimestamp ?? null,
  ]);
}

export interface CustomResourcesConfig {
  /**
   * Called after a change with the ResourceInfos now served and those no longer served
   * (the server registers and drops their registries and watch caches). Must not throw.
   */
  onChange(added: readonly ResourceInfo[], removed: readonly ResourceInfo[]): void;
}

/** The table of custom resources served now (see the file comment). */
export class CustomResources {
  private readonly byCRD = new Map<string, { fingerprint: string; infos: ResourceInfo[] }>();
  private readonly byPath = new Map<string, ResourceInfo>();
  private served_: ResourceInfo[] = [];
  private generation_ = 0;

  constructor(private readonly cfg: CustomResourcesConfig) {}

  /** Bumped on every change of what is served (discovery and OpenAPI cache by it). */
  get generation(): number {
    return this.generation_;
  }

  /** The custom resource served at `group`/`version` named `plural`, if any. */
  find(group: string, version: string, plural: string): ResourceInfo | undefined {
    return this.byPath.get(`${group}/${version}/${plural}`);
  }

  /** Every custom resource served, grouped by CRD (preferred version first), CRDs by name. */
  served(): readonly ResourceInfo[] {
    return this.served_;
  }

  /** A CRD was added or changed (`deleted` false) or is gone (`deleted` true). */
  apply(obj: KubeObject, deleted: boolean): void {
    const crd = obj as CustomResourceDefinition;
    const name = crd.metadata?.name ?? '';
    const before = this.byCRD.get(name);
    if (deleted) {
      if (!before) return;
      this.byCRD.delete(name);
      this.rebuild([], before.infos);
      return;
    }
    const fingerprint = servingFingerprint(crd);
    if (before?.fingerprint === fingerprint) return;
    const infos = resourceInfosOf(crd);
    this.byCRD.set(name, { fingerprint, infos });
    this.rebuild(infos, before?.infos ?? []);
  }

  /** Forgets every CRD not in `names` (after a relist of the CRD watch). */
  retainOnly(names: ReadonlySet<string>): void {
    for (const name of [...this.byCRD.keys()]) {
      if (!names.has(name)) this.apply({ metadata: { name } }, true);
    }
  }

  private rebuild(added: ResourceInfo[], removed: ResourceInfo[]): void {
    if (added.length === 0 && removed.length === 0) return;
    this.byPath.clear();
    const all: ResourceInfo[] = [];
    for (const name of [...this.byCRD.keys()].sort()) {
      for (const r of this.byCRD.get(name)!.infos) {
        const key = `${r.group}/${r.version}/${r.resource}`;
        // Two CRDs never share a group and plural (the name is <plural>.<group>).
        this.byPath.set(key, r);
        all.push(r);
      }
    }
    this.served_ = all;
    this.generation_++;
    this.cfg.onChange(added, removed);
  }
}
