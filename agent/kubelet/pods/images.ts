/**
 * Making sure a container's image is present before it is created: the kubelet's image
 * manager (pkg/kubelet/images/image_manager.go, EnsureImageExists).
 *
 * - The pull policy is the container's `imagePullPolicy`, defaulted as Kubernetes does:
 *   `Always` for an image tagged `latest` or with neither tag nor digest, else
 *   `IfNotPresent`.
 * - A reference that does not parse → InvalidImageName (event InspectFailed).
 * - `Never` and absent → ErrImageNeverPull (event ErrImageNeverPull).
 * - Present and not `Always` → event Pulled "Container image ... already present on machine".
 * - Otherwise pull, unless a pull of this image for this pod failed less than the
 *   backoff ago (10 s doubling to 300 s) → ImagePullBackOff (event BackOff); events
 *   Pulling, then Pulled "Successfully pulled image ... in Xs" or Failed; a failed pull →
 *   ErrImagePull.
 * Every failure also records a Warning `Failed` event "Error: <reason>", as the kubelet does.
 *
 * Credentials (kuberuntime_image.go's PullImage): the pod's imagePullSecrets, read through
 * `getSecret`, give a keyring (pull-secrets.ts); each credential matching the image is
 * tried in order until a pull succeeds (the failure names every attempt's error), none
 * matching pulls without. A secret that cannot be read is skipped, with a Warning
 * `FailedToRetrieveImagePullSecret` on the pod (kubelet_pods.go's getPullSecretsForPod).
 */
import type { Logger } from '../../../api/log.js';
import type { Clock } from '../../../api/clock.js';
import type { EventRecorder, EventTarget } from '../../../api/client/events.js';
import type { AuthConfig, ImageService } from '../../../cri/index.js';
import type { KubeObject } from '../../../api/object.js';
import { isCriError } from '../../../cri/index.js';
import { parseImageReference } from '../../../cri/index.js';
import { Backoff } from './backoff.js';
import { ContainerStartError } from './errors.js';
import type { KubeletContainer, KubeletPod } from './types.js';
import { errorMessage } from '../../../api/errors.js';
import { dockerConfigEntries, lookupCredentials, type DockerConfigEntry } from './pull-secrets.js';

/** The effective pull policy of a container (SetDefaults_Container's rule when unset). */
export function pullPolicyOf(container: KubeletContainer): 'Always' | 'IfNotPresent' | 'Never' {
  if (container.imagePullPolicy) return container.imagePullPolicy;
  return defaultPullPolicy(container.image ?? '');
}

/**
 * Kubernetes' default pull policy for `image`: `Always` for tag `latest` or no tag and no
 * digest, else `IfNotPresent`. A reference that does not parse gets `IfNotPresent` (it
 * fails later as InvalidImageName).
 */
export function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  try {
    const ref = parseImageReference(image);
    if (ref.tag === 'latest' || (ref.tag === undefined && ref.digest === undefined)) return 'Always';
    return 'IfNotPresent';
  } catch {
    return 'IfNotPresent';
  }
}

/** Settings of an ImageManager. */
export interface ImageManagerConfig {
  images: ImageService;
  recorder: Pick<EventRecorder, 'event'>;
  clock: Clock;
  logger: Logger;
  /** First pull backoff, ms (default 10 000). */
  backoffInitialMs?: number;
  /** Longest pull backoff, ms (default 300 000). */
  backoffMaxMs?: number;
  /**
   * Reads Secret `name` of `namespace` for imagePullSecrets: undefined when it does not
   * exist; throws for other failures. Unset: pulls go without credentials.
   */
  getSecret?: (namespace: string, name: string) => Promise<KubeObject | undefined>;
}

/** See the file comment. */
export class ImageManager {
  private readonly cfg: ImageManagerConfig;
  /** Keyed `<pod uid>_<image>`, as the kubelet's. */
  readonly backoff: Backoff;

  constructor(cfg: ImageManagerConfig) {
    this.cfg = cfg;
    this.backoff = new Backoff({
      clock: cfg.clock,
      initialMs: cfg.backoffInitialMs ?? 10_000,
      maxMs: cfg.backoffMaxMs ?? 300_000,
    });
  }

  /**
   * Resolves with the image's id once `container.image` is present per its pull policy.
   * `ref` is the container's object reference for events (fieldPath `spec.containers{name}`).
   * @throws ContainerStartError InvalidImageName, ErrImageNeverPull, ImagePullBackOff or
   *   ErrImagePull; CriError Unavailable when the runtime is down.
   */
  async ensureImageExists(pod: KubeletPod, container: KubeletContainer, ref: EventTarget): Promise<string> {
    const { recorder, images, clock } = this.cfg;
    const image = container.image ?? '';
    const fail = (reason: ContainerStartError['reason'], message: string, cause?: unknown): never => {
      recorder.event(ref, 'Warning', 'Failed', `Error: ${reason}`);
      throw new ContainerStartError(reason, message, { cause });
    };
    try {
      parseImageReference(image);
    } catch (err) {
      const message = `Failed to apply default image tag "${image}": couldn't parse image name "${image}": invalid reference format`;
      recorder.event(ref, 'Warning', 'InspectFailed', message);
      return fail('InvalidImageName', message, err);
    }
    const policy = pullPolicyOf(container);
    const present = await images.imageStatus(image);
    if (present && policy !== 'Always') {
      recorder.event(ref, 'Normal', 'Pulled', `Container image "${image}" already present on machine`);
      return present.id;
    }
    if (policy === 'Never') {
      const message = `Container image "${image}" is not present with pull policy of Never`;
      recorder.event(ref, 'Warning', 'ErrImageNeverPull', message);
      return fail('ErrImageNeverPull', message);
    }
    const key = `${pod.metadata.uid}_${image}`;
    if (this.backoff.remainingSinceUpdate(key) > 0) {
      const message = `Back-off pulling image "${image}"`;
      recorder.event(ref, 'Normal', 'BackOff', message);
      return fail('ImagePullBackOff', message);
    }
    recorder.event(ref, 'Normal', 'Pulling', `Pulling image "${image}"`);
    this.cfg.logger.info('pulling image', { pod: `${pod.metadata.namespace}/${pod.metadata.name}`, image });
    const started = clock.now();
    let id: string;
    try {
      const creds = lookupCredentials(await this.pullSecretEntries(pod), image);
      id = await this.pullWith(image, creds);
    } catch (err) {
      if (isCriError(err, 'Unavailable')) throw err;
      this.backoff.next(key);
      const why = errorMessage(err);
      const reason = isCriError(err, 'InvalidArgument') ? 'InvalidImageName' : 'ErrImagePull';
      recorder.event(ref, 'Warning', 'Failed', `Failed to pull image "${image}": ${why}`);
      return fail(reason, why, err);
    }
    this.backoff.reset(key);
    const secs = ((clock.now() - started) / 1000).toFixed(3);
    const size = (await images.imageStatus(image).catch(() => undefined))?.size;
    recorder.event(
      ref,
      'Normal',
      'Pulled',
      `Successfully pulled image "${image}" in ${secs}s (${secs}s including waiting)` +
        (size !== undefined ? `. Image size: ${size} bytes.` : ''),
    );
    return id;
  }

  /** The docker config entries of the pod's imagePullSecrets that could be read. */
  private async pullSecretEntries(pod: KubeletPod): Promise<DockerConfigEntry[]> {
    const { getSecret } = this.cfg;
    const refs = (pod.spec.imagePullSecrets ?? []).map((r) => r.name ?? '').filter((n) => n !== '');
    if (!getSecret || refs.length === 0) return [];
    const namespace = pod.metadata.namespace ?? 'default';
    const entries: DockerConfigEntry[] = [];
    const failed: string[] = [];
    for (const name of refs) {
      try {
        const secret = await getSecret(namespace, name);
        if (!secret) throw new Error(`secret "${name}" not found`);
        entries.push(...dockerConfigEntries(secret));
      } catch (err) {
        this.cfg.logger.info('Unable to retrieve pull secret, the image pull may not succeed.', {
          pod: `${namespace}/${pod.metadata.name}`,
          secret: `${namespace}/${name}`,
          err: errorMessage(err),
        });
        failed.push(name);
      }
    }
    if (failed.length > 0) {
      this.cfg.recorder.event(
        { kind: 'Pod', apiVersion: 'v1', name: pod.metadata.name, namespace, uid: pod.metadata.uid },
        'Warning',
        'FailedToRetrieveImagePullSecret',
        `Unable to retrieve some image pull secrets (${failed.join(', ')}); attempting to pull the image may not succeed.`,
      );
    }
    return entries;
  }

  /** Pulls without credentials when `creds` is empty, else with each in turn until one works. */
  private async pullWith(image: string, creds: AuthConfig[]): Promise<string> {
    const { images } = this.cfg;
    if (creds.length === 0) return images.pullImage(image);
    const errs: unknown[] = [];
    for (const auth of creds) {
      try {
        return await images.pullImage(image, undefined, auth);
      } catch (err) {
        if (isCriError(err, 'Unavailable') || isCriError(err, 'InvalidArgument')) throw err;
        errs.push(err);
      }
    }
    if (errs.length === 1) throw errs[0];
    // utilerrors.NewAggregate's form.
    throw new Error(`[${errs.map(errorMessage).join(', ')}]`, { cause: errs[0] });
  }
}
