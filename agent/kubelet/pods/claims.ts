/**
 * A pod's persistentVolumeClaim volume resolved to the directory to mount, as the
 * kubelet's desired-state-of-world populator (getPVCExtractPV, getPVSpec) and the mount
 * operation's node affinity check do:
 *
 *   claim ── not found / being deleted / not Bound / no volumeName ──▶ ClaimNotReadyError
 *     │ spec.volumeName
 *   volume ── not found / claimRef missing or of another claim uid ──▶ ClaimNotReadyError
 *     │ volumeMode Block mounted as a filesystem ─────────────────────▶ MountError
 *     │ nodeAffinity that does not hold for this Node ─────────────────▶ MountError
 *     │ hostPath (its `type` checked or created, as a hostPath volume) or local (the path
 *     ▼ must be a directory); any other source ──────────────────────▶ MountError
 *   { hostPath, readOnly: the pod's claim readOnly }
 *
 * ClaimNotReadyError's message is the kubelet's FailedMount wording for a volume it could
 * not process ("Unable to attach or mount volumes: … failed to process volumes=[data]:
 * error processing PVC default/data: PVC is not bound"); the pod worker retries with
 * backoff, so the pod starts once the claim is bound.
 */
import { existsSync, statSync } from 'node:fs';
import { errorMessage } from '../../../api/errors.js';
import { requirementMatches, type SelectionOperator } from '../../../api/meta/labels.js';
import type { KubeObject } from '../../../api/object.js';
import type { NodeSelectorRequirement, NodeSelectorTerm } from '../../../api/types.js';
import type { PersistentVolume, PersistentVolumeClaim } from '../../storage/types.js';
import { MountError } from './errors.js';

/** The kubelet's words for a volume whose claim or PV is not usable yet (see the file comment). */
export class ClaimNotReadyError extends MountError {
  constructor(volume: string, namespace: string, claimName: string, why: string) {
    super(volume, why);
    this.message =
      `Unable to attach or mount volumes: unmounted volumes=[${volume}], unattached volumes=[], ` +
      `failed to process volumes=[${volume}]: error processing PVC ${namespace}/${claimName}: ${why}`;
    this.name = 'ClaimNotReadyError';
  }
}

/** How the resolution reads the API (a RestClient in the agent, plain functions in tests). */
export interface ClaimReader {
  /** The claim, undefined when it does not exist. */
  getClaim(namespace: string, name: string): Promise<PersistentVolumeClaim | undefined>;
  /** The volume, undefined when it does not exist. */
  getVolume(name: string): Promise<PersistentVolume | undefined>;
  /** This node (labels and name) for the volume's node affinity; undefined: not checked. */
  getNode?(): Promise<KubeObject | undefined>;
}

/** A claim volume resolved: the PV's directory on this node, and its name. */
export interface ResolvedClaim {
  volumeName: string;
  /** The PV's directory (not created or checked yet: see claimHostPath). */
  path: string;
  /** The hostPath type to check or create ('' for a local volume, which must exist). */
  hostPathType: string | undefined;
  /** Whether the PV is a `local` volume (the directory must already be there). */
  local: boolean;
  /** The pod's `persistentVolumeClaim.readOnly`. */
  readOnly: boolean;
}

const OPERATORS: Readonly<Record<NodeSelectorRequirement['operator'], SelectionOperator>> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
  Gt: 'gt',
  Lt: 'lt',
};

/** Whether one required NodeSelectorTerm holds for `node` (labels; matchFields on metadata.name). */
export function nodeSelectorTermMatches(term: NodeSelectorTerm, node: KubeObject): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  const holds = (r: NodeSelectorRequirement, labels: Readonly<Record<string, string>> | undefined) =>
    OPERATORS[r.operator] !== undefined &&
    requirementMatches({ key: r.key, operator: OPERATORS[r.operator], values: r.values ?? [] }, labels);
  for (const e of exprs) if (!holds(e, node.metadata?.labels)) return false;
  for (const f of fields)
    if (f.key !== 'metadata.name' || !holds(f, { 'metadata.name': node.metadata?.name ?? '' })) return false;
  return true;
}

/**
 * Resolves the claim volume `volume` (see the file comment).
 * @throws ClaimNotReadyError while the claim or its PV is not usable; MountError for a PV
 *   this kubelet cannot mount (Block, another node's, an unsupported source).
 */
export async function resolveClaim(
  reader: ClaimReader,
  namespace: string,
  volume: string,
  source: { claimName: string; readOnly?: boolean },
): Promise<ResolvedClaim> {
  const { claimName } = source;
  const notReady = (why: string) => new ClaimNotReadyError(volume, namespace, claimName, why);
  let claim: PersistentVolumeClaim | undefined;
  try {
    claim = await reader.getClaim(namespace, claimName);
  } catch (err) {
    throw notReady(`failed to fetch PVC from API server: ${errorMessage(err)}`);
  }
  if (!claim) throw notReady(`persistentvolumeclaim "${claimName}" not found`);
  if (claim.metadata.deletionTimestamp)
    throw notReady(`can't start pod because PVC ${namespace}/${claimName} is being deleted`);
  if (claim.status?.phase !== 'Bound') throw notReady('PVC is not bound');
  const pvName = claim.spec.volumeName;
  if (!pvName) throw notReady('PVC has empty pvc.Spec.VolumeName');
  let pv: PersistentVolume | undefined;
  try {
    pv = await reader.getVolume(pvName);
  } catch (err) {
    throw notReady(`failed to fetch PV ${pvName} from API server: ${errorMessage(err)}`);
  }
  if (!pv)
    throw notReady(`failed to fetch PV ${pvName} from API server: persistentvolumes "${pvName}" not found`);
  const ref = pv.spec?.claimRef;
  if (!ref)
    throw notReady(
      `found PV object ${pvName} but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim`,
    );
  if (ref.uid !== claim.metadata.uid)
    throw notReady(
      `found PV object ${pvName} but its pv.Spec.ClaimRef.UID (${ref.uid ?? ''}) does not point to claim.UID (${claim.metadata.uid ?? ''})`,
    );
  if (pv.spec?.volumeMode === 'Block')
    throw new MountError(
      volume,
      `volume ${volume} has volumeMode Block, but is specified in volumeMounts (k8ts mounts filesystems only)`,
    );
  const required = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms;
  if (required && reader.getNode) {
    const node = await reader.getNode();
    if (node && !required.some((t) => nodeSelectorTermMatches(t, node)))
      throw new MountError(
        volume,
        `MountVolume.NodeAffinity check failed for volume "${pvName}" : no matching NodeSelectorTerms`,
      );
  }
  const readOnly = Boolean(source.readOnly);
  if (pv.spec?.hostPath)
    return {
      volumeName: pvName,
      path: pv.spec.hostPath.path,
      hostPathType: pv.spec.hostPath.type ?? '',
      local: false,
      readOnly,
    };
  if (pv.spec?.local)
    return { volumeName: pvName, path: pv.spec.local.path, hostPathType: undefined, local: true, readOnly };
  throw new MountError(
    volume,
    `persistent volume ${pvName}: volume source not supported by k8ts (hostPath and local are)`,
  );
}

/**
 * Checks a `local` volume's directory (the local plugin's: the path must exist on the node).
 * @throws MountError when it does not, or is not a directory.
 */
export function checkLocalPath(volume: string, resolved: ResolvedClaim): void {
  if (!existsSync(resolved.path) || !statSync(resolved.path).isDirectory())
    throw new MountError(
      volume,
      `local volume ${resolved.volumeName}: path "${resolved.path}" does not exist or is not a directory`,
    );
}
